package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/tools"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestBreakerStates(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	b := &breaker{now: clk.Now, cooldown: breakerCooldown}
	steps := []struct {
		name      string
		advance   time.Duration
		record    *bool // how the previous call ended, recorded before asking
		wantOK    bool
		wantMsg   string
		wantState string
	}{
		{name: "closed lets calls through", wantOK: true, wantState: "closed"},
		{name: "one failure", record: ptr(false), wantOK: true, wantState: "closed"},
		{name: "two failures", record: ptr(false), wantOK: true, wantState: "closed"},
		{name: "third opens", record: ptr(false), wantMsg: "MCP server 's' is unreachable after 3 consecutive failures. Auto-retry available in ~60s", wantState: "open"},
		{name: "still open at 59s", advance: 59 * time.Second, wantMsg: "~1s", wantState: "open"},
		{name: "half-open: one probe", advance: time.Second, wantOK: true, wantState: "half-open"},
		{name: "a second call while probing waits", wantMsg: "Auto-retry", wantState: "half-open"},
		{name: "probe fails: open again", record: ptr(false), wantMsg: "4 consecutive", wantState: "open"},
		{name: "after the cooldown a probe", advance: 60 * time.Second, wantOK: true, wantState: "half-open"},
		{name: "probe succeeds: closed", record: ptr(true), wantOK: true, wantState: "closed"},
	}
	for _, s := range steps {
		clk.advance(s.advance)
		if s.record != nil {
			b.record(*s.record, false)
		}
		ok, msg := b.allow("s")
		if ok != s.wantOK || !strings.Contains(msg, s.wantMsg) {
			t.Fatalf("%s: allow = %v %q, want %v %q", s.name, ok, msg, s.wantOK, s.wantMsg)
		}
		if got := b.state(); got != s.wantState {
			t.Fatalf("%s: state %s, want %s", s.name, got, s.wantState)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestBreakerApplicationErrorsMessage(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	b := &breaker{now: clk.Now, cooldown: breakerCooldown}
	for range 3 {
		b.record(false, true)
	}
	_, msg := b.allow("s")
	if !strings.HasPrefix(msg, "MCP server 's' rejected the last 3 calls (it is reachable") || !strings.Contains(msg, "Do NOT repeat the same call") {
		t.Fatalf("msg = %s", msg)
	}
}

// The breaker through real calls: three tool errors open it, calls then fail
// without reaching the server, and after the cooldown a good call closes it.
func TestBreakerOverRealCalls(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	m, _ := newTestManager(t, &ServerConfig{Name: "bad", Command: python(t), Args: []string{badServer(t)}})
	m.opts.Now = clk.Now
	c, _ := m.lookup("bad")
	c.br.now = clk.Now
	ctx := context.Background()
	for i := range 3 {
		got, err := m.CallTool(ctx, "bad", "fail", nil, 0)
		if err != nil || !strings.Contains(got, `"error"`) {
			t.Fatalf("call %d: %v %s", i, err, got)
		}
	}
	_, err := m.CallTool(ctx, "bad", "ok", nil, 0)
	if err == nil || !strings.Contains(err.Error(), "rejected the last 3 calls") {
		t.Fatalf("open breaker let the call through: %v", err)
	}
	clk.advance(61 * time.Second)
	if got, err := m.CallTool(ctx, "bad", "ok", nil, 0); err != nil || got != `{"result":"done ok"}` {
		t.Fatalf("half-open probe: %v %s", err, got)
	}
	if st := m.Statuses()[0]; st.Breaker != "closed" {
		t.Fatalf("breaker %s after a good probe", st.Breaker)
	}
}

type answer struct {
	choice tools.ApprovalChoice
	err    error
	asked  []tools.ApprovalRequest
}

func (a *answer) Approve(_ context.Context, req tools.ApprovalRequest) (tools.ApprovalChoice, error) {
	a.asked = append(a.asked, req)
	return a.choice, a.err
}

func TestTrustGate(t *testing.T) {
	cases := []struct {
		name      string
		trust     string
		tool      string
		approver  *answer
		wantErr   string
		wantAsked int
	}{
		{"full trust never asks", TrustFull, "write", &answer{choice: tools.ChoiceDeny}, "", 0},
		{"read-only tool never asks", TrustUntrusted, "ok", &answer{choice: tools.ChoiceDeny}, "", 0},
		{"write tool approved", TrustUntrusted, "write", &answer{choice: tools.ChoiceOnce}, "", 1},
		{"write tool denied", TrustUntrusted, "write", &answer{choice: tools.ChoiceDeny},
			"The user did not approve running write-capable MCP tool 'write' on untrusted server 'bad'. The command was NOT run. Do not retry without explicit user direction", 1},
		{"approval broken", TrustUntrusted, "write", &answer{err: errors.New("tty gone")},
			"was blocked: the approval system was unavailable (fail-closed)", 1},
		{"nobody to ask", TrustUntrusted, "write", nil, "was blocked: the approval system was unavailable (fail-closed)", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newTestManager(t, &ServerConfig{Name: "bad", Command: python(t), Args: []string{badServer(t)}, Trust: tc.trust})
			if tc.approver != nil {
				m.opts.Approver = tc.approver
			}
			got, err := m.CallTool(context.Background(), "bad", tc.tool, nil, 0)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr == "" && !strings.Contains(got, "done "+tc.tool):
				t.Fatalf("result %s", got)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.approver != nil {
				if len(tc.approver.asked) != tc.wantAsked {
					t.Fatalf("asked %d times, want %d", len(tc.approver.asked), tc.wantAsked)
				}
				if tc.wantAsked > 0 && tc.approver.asked[0].RuleKey != "mcp-trust/bad" {
					t.Fatalf("request %+v", tc.approver.asked[0])
				}
			}
		})
	}
}

// A server that cannot connect is retried (3 times on first connect, with
// doubling backoff up to 60 s), then parked: calls fail at once until the
// park interval has passed, then it is tried again.
func TestConnectRetriesThenPark(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	var waits []time.Duration
	m, _ := newTestManager(t, &ServerConfig{Name: "crash", Command: python(t), Args: []string{badServer(t), "crash"}})
	m.opts.Now = clk.Now
	m.opts.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	c, _ := m.lookup("crash")
	c.br.now = clk.Now
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "crash", "x", nil, 0); err == nil {
		t.Fatal("a crashing server connected")
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !equalDur(waits, want) {
		t.Fatalf("backoff waits %v, want %v", waits, want)
	}
	if st := m.Statuses()[0]; st.State != "parked" {
		t.Fatalf("state %s, want parked", st.State)
	}
	waits = nil
	_, err := m.CallTool(ctx, "crash", "x", nil, 0)
	if err == nil || !strings.Contains(err.Error(), "is parked after repeated connect failures") || len(waits) != 0 {
		t.Fatalf("parked server retried: %v (waits %v)", err, waits)
	}
	clk.advance(301 * time.Second)
	c.br = &breaker{now: clk.Now, cooldown: breakerCooldown} // the breaker opened meanwhile; this tests the park alone
	_, _ = m.CallTool(ctx, "crash", "x", nil, 0)
	if len(waits) != firstConnectRetries {
		t.Fatalf("after the park interval the server was not probed again (waits %v)", waits)
	}
}

func equalDur(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
