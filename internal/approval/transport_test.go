package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/tools"
)

// fixedPrompter answers every prompt with one choice and counts the prompts.
type fixedPrompter struct {
	choice Choice
	mu     sync.Mutex
	asked  int
}

func (p *fixedPrompter) Prompt(context.Context, Prompt) (Choice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	return p.choice, nil
}

func route(present PresentFunc) *TransportRoute {
	return &TransportRoute{Name: "pager", Lookup: func(name string) (PresentFunc, bool) {
		if name != "pager" || present == nil {
			return nil, false
		}
		return present, true
	}, Redact: func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }}
}

func respond(choice string) PresentFunc {
	return func(_ context.Context, r TransportRequest) (TransportDecision, error) {
		return TransportDecision{RequestID: r.RequestID, RequestDigest: r.Digest, Choice: choice}, nil
	}
}

// Every way a transport can answer: a current decision among the offered
// choices counts; anything else is a deny with the failure named in the hook
// and the model's message, unless transport_fallback is builtin.
func TestTransportDecisions(t *testing.T) {
	hang := func(ctx context.Context, _ TransportRequest) (TransportDecision, error) {
		<-ctx.Done()
		return TransportDecision{}, ctx.Err()
	}
	late := func(_ context.Context, r TransportRequest) (TransportDecision, error) {
		time.Sleep(300 * time.Millisecond) // ignores its context: the answer still does not count
		return TransportDecision{RequestID: r.RequestID, RequestDigest: r.Digest, Choice: "once"}, nil
	}
	tests := []struct {
		name     string
		present  PresentFunc
		plugin   bool // the request is a plugin's: "always" is not offered
		fallback bool
		want     Choice
		failure  string // "" when the transport's choice counts
		prompted bool
	}{
		{"once", respond("once"), false, false, ChoiceOnce, "", false},
		{"session", respond("session"), false, false, ChoiceSession, "", false},
		{"always", respond("always"), false, false, ChoiceAlways, "", false},
		{"deny", respond("deny"), false, false, ChoiceDeny, "", false},
		{"always not offered", respond("always"), true, false, ChoiceDeny, FailInvalid, false},
		{"unknown choice", respond("yes please"), false, false, ChoiceDeny, FailInvalid, false},
		{"forged id", func(_ context.Context, r TransportRequest) (TransportDecision, error) {
			return TransportDecision{RequestID: "0123", RequestDigest: r.Digest, Choice: "once"}, nil
		}, false, false, ChoiceDeny, FailStale, false},
		{"changed digest", func(_ context.Context, r TransportRequest) (TransportDecision, error) {
			return TransportDecision{RequestID: r.RequestID, RequestDigest: strings.Repeat("0", 64), Choice: "once"}, nil
		}, false, false, ChoiceDeny, FailStale, false},
		{"plain dict", func(context.Context, TransportRequest) (TransportDecision, error) {
			return TransportDecision{Invalid: "dict"}, nil
		}, false, false, ChoiceDeny, FailInvalid, false},
		{"raises", func(context.Context, TransportRequest) (TransportDecision, error) {
			return TransportDecision{}, errors.New("boom with a secret")
		}, false, false, ChoiceDeny, FailError, false},
		{"hangs", hang, false, false, ChoiceDeny, FailTimeout, false},
		{"answers after the deadline", late, false, false, ChoiceDeny, FailTimeout, false},
		{"not registered", nil, false, false, ChoiceDeny, FailUnavailable, false},
		{"fallback builtin", nil, false, true, ChoiceSession, "", true},
		{"fallback builtin after a timeout", hang, false, true, ChoiceSession, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &hookRecorder{}
			p := &fixedPrompter{choice: ChoiceSession}
			r := route(tc.present)
			r.Fallback = tc.fallback
			a := &Approver{Prompter: p, Hooks: rec, SessionKey: "sk", Transport: r, Timeout: 100 * time.Millisecond}
			origin := tools.Origin{}
			if tc.plugin {
				origin = tools.Origin{Kind: tools.FromPlugin, Plugin: "p"}
			}
			got, err := a.Approve(context.Background(), tools.ApprovalRequest{ToolName: "deploy", Args: map[string]any{"pw": "hunter2"},
				Message: "deploys", RuleKey: "deploy", Origin: origin})
			if got != tc.want {
				t.Errorf("choice %q, want %q", got, tc.want)
			}
			if (p.asked > 0) != tc.prompted {
				t.Errorf("built-in prompt asked %d times", p.asked)
			}
			msg, blocked := tools.BlockMessage(err)
			if tc.failure != "" && !tc.fallback {
				if !blocked || !strings.Contains(msg, "Selected approval transport failed ("+tc.failure+")") || !strings.Contains(msg, "NOT consented") {
					t.Errorf("err %v: want the BLOCKED message for %s", err, tc.failure)
				}
			} else if err != nil {
				t.Errorf("err %v", err)
			}
			if len(rec.fired) < 2 {
				t.Fatalf("hooks fired: %+v", rec.fired)
			}
			pre, post := rec.fired[0], rec.fired[1]
			if pre.hook != "pre_approval_request" || pre.payload["surface"] != "transport:pager" || post.hook != "post_approval_response" {
				t.Fatalf("hooks %+v", rec.fired)
			}
			if strings.Contains(pre.payload["command"].(string), "hunter2") {
				t.Errorf("the transport's hooks saw the secret: %v", pre.payload["command"])
			}
			wantChoice := string(tc.want)
			if tc.failure != "" {
				wantChoice = "transport_" + tc.failure
			}
			if tc.fallback {
				if tc.present == nil {
					wantChoice = "transport_unavailable"
				} else {
					wantChoice = "transport_timeout"
				}
			}
			if post.payload["choice"] != wantChoice || post.payload["request_id"] != pre.payload["request_id"] || len(pre.payload["request_digest"].(string)) != 64 {
				t.Errorf("post_approval_response %+v, want choice %s", post.payload, wantChoice)
			}
		})
	}
}

// The request offers what the host allows, redacted, with a digest over its
// fields and the session key.
func TestTransportRequest(t *testing.T) {
	var got TransportRequest
	a := &Approver{SessionKey: "sk", Surface: "gateway", Timeout: 42 * time.Second, Transport: route(func(_ context.Context, r TransportRequest) (TransportDecision, error) {
		got = r
		return TransportDecision{RequestID: r.RequestID, RequestDigest: r.Digest, Choice: "deny"}, nil
	})}
	if _, err := a.ApproveCommand(context.Background(), req("echo hunter2 && rm -rf /tmp/x")); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != 1 || len(got.RequestID) != 32 || got.Surface != "gateway" || got.TimeoutSeconds != 42 ||
		strings.Join(got.AllowedChoices, ",") != "once,session,always,deny" || strings.Contains(got.Command, "hunter2") || got.PatternKey == "" {
		t.Fatalf("request %+v", got)
	}
	in := approvalInput{command: "c", description: "d", keys: []string{"k"}}
	one, two := newTransportRequest(in, "cli", "a", 0, nil), newTransportRequest(in, "cli", "b", 0, nil)
	one.RequestID = two.RequestID
	if one.Digest == two.Digest {
		t.Error("the digest does not cover the session key")
	}
	if one.TimeoutSeconds != 300 {
		t.Errorf("default timeout %d", one.TimeoutSeconds)
	}
}

// More than eight requests waiting on transports at once: the ninth is
// denied as busy rather than queued behind a plugin that may never answer.
func TestTransportWorkersBounded(t *testing.T) {
	for deadline := time.Now().Add(5 * time.Second); len(transportSlots) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) { // another test's abandoned worker still holds a slot
			t.Fatalf("%d transport slots still held", len(transportSlots))
		}
	}
	release := make(chan struct{})
	entered := make(chan struct{}, maxTransportWorkers)
	block := func(ctx context.Context, r TransportRequest) (TransportDecision, error) {
		entered <- struct{}{}
		<-release
		return TransportDecision{RequestID: r.RequestID, RequestDigest: r.Digest, Choice: "once"}, nil
	}
	var wg sync.WaitGroup
	for i := 0; i < maxTransportWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &Approver{Transport: route(block), Timeout: 10 * time.Second}
			if got, err := a.ApproveCommand(context.Background(), req("rm -rf /tmp/x")); got != ChoiceOnce || err != nil {
				t.Errorf("a request within the bound: %q %v", got, err)
			}
		}()
	}
	for i := 0; i < maxTransportWorkers; i++ {
		<-entered
	}
	a := &Approver{Transport: route(block), Timeout: 10 * time.Second}
	got, err := a.ApproveCommand(context.Background(), req("rm -rf /tmp/y"))
	if tf, ok := IsTransportFailure(err); got != ChoiceDeny || !ok || tf.Failure != FailBusy {
		t.Errorf("the ninth: %q %v", got, err)
	}
	close(release)
	wg.Wait()
}

// A cancelled turn ends the wait at once, as "interrupted".
func TestTransportInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &Approver{Transport: route(func(ctx context.Context, _ TransportRequest) (TransportDecision, error) {
		cancel()
		<-ctx.Done()
		return TransportDecision{}, ctx.Err()
	}), Timeout: 10 * time.Second}
	got, err := a.ApproveCommand(ctx, req("rm -rf /tmp/x"))
	if tf, ok := IsTransportFailure(err); got != ChoiceDeny || !ok || tf.Failure != FailInterrupted {
		t.Errorf("%q %v", got, err)
	}
}
