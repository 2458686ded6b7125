package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// recAdapter is a platform connection that records what it was asked to do
// and counts, across every process of the test, how many are connected.
type recAdapter struct {
	name      string
	live      *atomic.Int32
	maxLive   *atomic.Int32
	connected atomic.Bool
	runs      atomic.Int32
	fatal     error // Run returns it at once when set
	// busy: this many sends fail as a rate limit would (retryable).
	busy atomic.Int32

	mu   sync.Mutex
	done []string
}

func (a *recAdapter) Name() string    { return a.name }
func (a *recAdapter) Connected() bool { return a.connected.Load() }

func (a *recAdapter) Run(ctx context.Context, _ platform.Handler) error {
	if a.fatal != nil {
		return a.fatal
	}
	a.runs.Add(1)
	n := a.live.Add(1)
	for m := a.maxLive.Load(); n > m && !a.maxLive.CompareAndSwap(m, n); m = a.maxLive.Load() {
	}
	a.connected.Store(true)
	<-ctx.Done()
	a.connected.Store(false)
	a.live.Add(-1)
	return nil
}

func (a *recAdapter) record(s string) {
	a.mu.Lock()
	a.done = append(a.done, s)
	a.mu.Unlock()
}

func (a *recAdapter) performed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.done...)
}

func (a *recAdapter) Send(_ context.Context, m platform.Outbound) (platform.SendResult, error) {
	if a.busy.Add(-1) >= 0 {
		a.record("refused " + m.ChatID + " " + m.Text)
		return platform.SendResult{Retryable: true, RetryAfter: time.Second}, errors.New("429 Too Many Requests")
	}
	a.record("send " + m.ChatID + " " + m.Text)
	return platform.SendResult{MessageID: "m1"}, nil
}

func (a *recAdapter) Edit(_ context.Context, chatID, messageID, text string) error {
	a.record("edit " + chatID + " " + messageID + " " + text)
	return nil
}

func (a *recAdapter) Typing(_ context.Context, chatID, _ string) error {
	a.record("typing " + chatID)
	return nil
}

func (a *recAdapter) AddReaction(_ context.Context, chatID, messageID, emoji string) error {
	a.record("reaction " + chatID + " " + messageID + " " + emoji)
	return nil
}

func (a *recAdapter) SetThreadTitle(_ context.Context, chatID, threadID, title string) error {
	a.record("title " + chatID + " " + threadID + " " + title)
	return nil
}

func fastCluster(url string) cluster.Config {
	return cluster.Config{URL: url, LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond,
		Poll: 200 * time.Millisecond, ElectRetry: 100 * time.Millisecond}
}

type ownerProc struct {
	node     *cluster.Node
	inner    *recAdapter
	o        *ownedAdapter
	injected chan string
	// redelivered counts the ledger redeliveries asked on gaining the connection.
	redelivered atomic.Int32
	stop        context.CancelFunc
	done        chan error
}

// startOwner is one gateway process's owned Discord connection.
func startOwner(t *testing.T, url string, live, maxLive *atomic.Int32) *ownerProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	p := &ownerProc{node: n, inner: &recAdapter{name: "discord", live: live, maxLive: maxLive},
		injected: make(chan string, 8), done: make(chan error, 1)}
	p.o = &ownedAdapter{inner: p.inner, role: roleDiscord, node: n, log: slog.New(slog.DiscardHandler)}
	p.o.setRunner(func(_ context.Context, pluginID, key, text string) bool {
		p.injected <- pluginID + " " + key + " " + text
		return true
	}, func(a platform.Adapter) { p.redelivered.Add(1) })
	rctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go func() { p.done <- p.o.Run(rctx, func(context.Context, platform.Event) {}) }()
	t.Cleanup(func() { p.halt(); n.Close() })
	return p
}

func (p *ownerProc) halt() {
	if p.stop != nil {
		p.stop()
		<-p.done
		p.stop = nil
	}
}

func waitUntil(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out (%s) waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaderOf(ps []*ownerProc) *ownerProc {
	var l *ownerProc
	for _, p := range ps {
		if p.o.leading.Load() {
			if l != nil {
				return nil // two at once: the caller's check fails
			}
			l = p
		}
	}
	return l
}

func TestOwnedAdapterOneOwnerRoutingAndTakeover(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	var live, maxLive atomic.Int32
	ps := []*ownerProc{startOwner(t, url, &live, &maxLive), startOwner(t, url, &live, &maxLive), startOwner(t, url, &live, &maxLive)}
	waitUntil(t, "one owner", 10*time.Second, func() bool { return leaderOf(ps) != nil && live.Load() == 1 })
	owner := leaderOf(ps)
	waitUntil(t, "the owner to send what the ledger owes", 5*time.Second, func() bool { return owner.redelivered.Load() == 1 })
	for _, p := range ps {
		if p != owner && p.redelivered.Load() != 0 {
			t.Fatal("a process without the connection redelivered the ledger's answers")
		}
	}
	var other *ownerProc
	for _, p := range ps {
		if p != owner {
			other = p
			break
		}
	}
	ctx := context.Background()
	if !other.o.Connected() {
		t.Fatal("a process without the connection says it cannot act (its database answers)")
	}

	// Every action of a process without the connection is performed by the owner, once.
	res, err := other.o.Send(ctx, platform.Outbound{ChatID: "c1", Text: "from afar"})
	if err != nil || res.MessageID != "" {
		t.Fatalf("routed send: %+v %v (a routed send knows no message id)", res, err)
	}
	for _, err := range []error{
		other.o.Edit(ctx, "c1", "m1", "edited"),
		other.o.Typing(ctx, "c1", ""),
		other.o.AddReaction(ctx, "c1", "m1", "👀"),
		other.o.SetThreadTitle(ctx, "c1", "t1", "About"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if routed, err := other.o.Inject(ctx, "pusher", "agent:main:discord:dm:c1", "a note"); !routed || err != nil {
		t.Fatalf("inject on a process without the connection: routed=%v %v", routed, err)
	}
	if routed, _ := owner.o.Inject(ctx, "pusher", "k", "x"); routed {
		t.Fatal("the owner routed its own injection instead of injecting it")
	}
	want := "send c1 from afar|edit c1 m1 edited|typing c1|reaction c1 m1 👀|title c1 t1 About"
	waitUntil(t, "the owner to perform the routed actions", 10*time.Second, func() bool { return len(owner.inner.performed()) >= 5 })
	select {
	case got := <-owner.injected:
		if got != "pusher agent:main:discord:dm:c1 a note" {
			t.Fatalf("injected on the owner: %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the routed injection never reached the owner")
	}
	if got := strings.Join(owner.inner.performed(), "|"); got != want {
		t.Fatalf("owner performed %q, want %q", got, want)
	}
	for _, p := range ps {
		if p != owner && len(p.inner.performed()) != 0 {
			t.Fatalf("a process without the connection performed %v", p.inner.performed())
		}
	}
	// The owner's own actions go straight to its connection.
	if res, err := owner.o.Send(ctx, platform.Outbound{ChatID: "c2", Text: "local"}); err != nil || res.MessageID != "m1" {
		t.Fatalf("owner's send: %+v %v", res, err)
	}

	// The owner's database connection drops: it disconnects at once and
	// another process takes over within the election's retry, alone.
	if _, err := other.node.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'hermes-leader discord' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)`); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a new owner", 10*time.Second, func() bool { l := leaderOf(ps); return l != nil && l != owner && live.Load() == 1 })
	next := leaderOf(ps)
	waitUntil(t, "the new owner to send what the ledger owes", 5*time.Second, func() bool { return next.redelivered.Load() == 1 })
	if owner.inner.Connected() {
		t.Fatal("the old owner is still connected")
	}
	// The old owner, now without the connection, routes to the new one.
	if _, err := owner.o.Send(ctx, platform.Outbound{ChatID: "c4", Text: "after the takeover"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the new owner to send the old owner's answer", 10*time.Second, func() bool {
		return strings.Contains(strings.Join(next.inner.performed(), "|"), "send c4 after the takeover")
	})

	// An owner that died mid-action: it claimed the action and never acked.
	// The claim expires and the next owner performs it, once.
	for _, p := range ps {
		p.halt()
	}
	if err := other.node.Send(ctx, roleDiscord, mustEncode(t, ownerAction{Op: opSend, Out: &platform.Outbound{ChatID: "c3", Text: "claimed by the dead"}})); err != nil {
		t.Fatal(err)
	}
	dead, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	claimed, err := dead.ClaimAction(ctx, roleDiscord)
	if err != nil || claimed == nil || !strings.Contains(string(claimed.Payload), "claimed by the dead") {
		t.Fatalf("the dying owner's claim: %v %v", claimed, err)
	}
	heir := startOwner(t, url, &live, &maxLive)
	waitUntil(t, "the expired claim to be performed by the heir", 15*time.Second, func() bool {
		return strings.Contains(strings.Join(heir.inner.performed(), "|"), "send c3 claimed by the dead")
	})
	if err := dead.Ack(ctx, claimed); !errors.Is(err, cluster.ErrLeaseLost) {
		t.Fatalf("the dead owner's late ack: %v, want ErrLeaseLost", err)
	}
	time.Sleep(500 * time.Millisecond) // a second performance would show by now
	if got := heir.inner.performed(); len(got) != 1 {
		t.Fatalf("the heir performed %v, want the one expired action", got)
	}

	// A routed send the platform refuses for now is tried again once its
	// claim expires, and not again once it went out.
	heir.inner.busy.Store(1)
	if _, err := other.o.Send(ctx, platform.Outbound{ChatID: "c5", Text: "busy"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the refused send to be tried again", 15*time.Second, func() bool {
		return strings.Contains(strings.Join(heir.inner.performed(), "|"), "send c5 busy")
	})
	if got := strings.Join(heir.inner.performed()[1:], "|"); got != "refused c5 busy|send c5 busy" {
		t.Fatalf("the heir's tries: %s", got)
	}
	if m := maxLive.Load(); m != 1 {
		t.Fatalf("%d connections were up at once", m)
	}
}

func TestOwnedAdapterFatalErrorEndsRun(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	refused := errors.New("discord: token refused")
	var live, maxLive atomic.Int32
	o := &ownedAdapter{inner: &recAdapter{name: "discord", live: &live, maxLive: &maxLive, fatal: refused},
		role: roleDiscord, node: n, log: slog.New(slog.DiscardHandler)}
	if err := o.Run(ctx, nil); !errors.Is(err, refused) {
		t.Fatalf("Run: %v, want the inner adapter's fatal error", err)
	}
}

func TestOwnerActionPerformRejects(t *testing.T) {
	var live, maxLive atomic.Int32
	o := &ownedAdapter{inner: &recAdapter{name: "discord", live: &live, maxLive: &maxLive}, role: roleDiscord}
	for _, tc := range []struct {
		payload string
		want    string
	}{
		{`not json`, "does not decode"},
		{`{"op":"send"}`, "without a message"},
		{`{"op":"launch"}`, `unknown kind "launch"`},
		{`{"op":"inject","key":"k"}`, "not serving"},
	} {
		_, err := o.perform(context.Background(), &cluster.Action{Payload: []byte(tc.payload)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("perform(%s): %v, want %q", tc.payload, err, tc.want)
		}
	}
	// A typing signal that waited out a takeover is dropped, a fresh one shown.
	stale := mustEncode(t, ownerAction{Op: opTyping, ChatID: "c", At: time.Now().Add(-time.Minute)})
	fresh := mustEncode(t, ownerAction{Op: opTyping, ChatID: "d", At: time.Now()})
	for _, p := range [][]byte{stale, fresh} {
		if _, err := o.perform(context.Background(), &cluster.Action{Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(o.inner.(*recAdapter).performed()); got != "[typing d]" {
		t.Fatalf("typing performed: %s", got)
	}
}

func TestWithPassword(t *testing.T) {
	for _, tc := range []struct{ url, pw, want string }{
		{"postgres://hermes@db/hermes", "", "postgres://hermes@db/hermes"},
		{"postgres://hermes@db/hermes", "s3cret", "postgres://hermes:s3cret@db/hermes"},
		{"postgres://hermes:mine@db/hermes", "s3cret", "postgres://hermes:mine@db/hermes"},
		{"postgres:///hermes?host=/run/pg", "pw", "postgres://:pw@/hermes?host=/run/pg"},
	} {
		if got := withPassword(tc.url, tc.pw); got != tc.want {
			t.Errorf("withPassword(%q, %q) = %q, want %q", tc.url, tc.pw, got, tc.want)
		}
	}
}

func mustEncode(t *testing.T, a ownerAction) []byte {
	t.Helper()
	b, err := a.encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
