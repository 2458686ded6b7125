package gateway

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

type qAdapter struct {
	mu   sync.Mutex
	sent []string
}

func (a *qAdapter) Name() string                                       { return "q" }
func (a *qAdapter) Run(ctx context.Context, _ platform.Handler) error  { <-ctx.Done(); return nil }
func (a *qAdapter) Edit(context.Context, string, string, string) error { return nil }
func (a *qAdapter) Typing(context.Context, string, string) error       { return nil }
func (a *qAdapter) Connected() bool                                    { return true }
func (a *qAdapter) Send(_ context.Context, m platform.Outbound) (platform.SendResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, m.Text)
	return platform.SendResult{}, nil
}

func (a *qAdapter) texts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.sent...)
}

type qEngine struct {
	delay time.Duration
	err   error
}

func (e qEngine) Turn(ctx context.Context, _ string, _ platform.Source, text string) (TurnResult, error) {
	time.Sleep(e.delay)
	if e.err != nil {
		return TurnResult{}, e.err
	}
	return TurnResult{Reply: "re: " + text}, nil
}
func (qEngine) NewSession(context.Context, string, platform.Source) (string, error) { return "s", nil }
func (qEngine) Info(context.Context, string) (SessionInfo, error)                   { return SessionInfo{}, nil }

type qAuth struct{ allow bool }

func (a qAuth) Check(platform.Source) auth.Decision                         { return auth.Decision{Allowed: a.allow} }
func (a qAuth) CheckInjected(platform.Source) auth.Decision                 { return auth.Decision{Allowed: a.allow} }
func (qAuth) PairingReply(context.Context, platform.Source) (string, error) { return "", nil }

// HandleQueued returns only once the turn's answer went out; a failed turn
// returns its error and sends no apology (the queue retries it); a sender
// who may not talk needs no turn; a draining runner takes nothing.
func TestHandleQueued(t *testing.T) {
	boom := errors.New("database away")
	tests := []struct {
		name    string
		engine  qEngine
		allow   bool
		drained bool
		wantErr error
		want    []string
	}{
		{"answered before it returns", qEngine{delay: 50 * time.Millisecond}, true, false, nil, []string{"re: hello"}},
		{"a failed turn is the queue's to retry", qEngine{err: boom}, true, false, boom, nil},
		{"an unauthorised sender needs no turn", qEngine{}, false, false, nil, nil},
		{"draining takes nothing", qEngine{}, true, true, ErrDraining, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &qAdapter{}
			r, err := New(Options{Adapters: []platform.Adapter{a}, Engine: tc.engine, Auth: qAuth{tc.allow}, DrainTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if tc.drained {
				r.mu.Lock()
				r.draining = true
				r.mu.Unlock()
			}
			ev := platform.Event{Kind: platform.EventMessage, Text: "hello", Source: platform.Source{ChatID: "1", UserID: "1", ChatType: platform.ChatDM}}
			err = r.HandleQueued(context.Background(), "q", ev)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("HandleQueued: %v, want %v", err, tc.wantErr)
			}
			if got := a.texts(); len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
				t.Fatalf("sent %q, want %q", got, tc.want)
			}
		})
	}
	r, _ := New(Options{Adapters: []platform.Adapter{&qAdapter{}}, Engine: qEngine{}, Auth: qAuth{true}})
	if err := r.HandleQueued(context.Background(), "nope", platform.Event{}); err == nil {
		t.Error("an event of a platform the runner does not serve was taken")
	}
}

type blockEngine struct{ started chan struct{} }

func (e blockEngine) Turn(ctx context.Context, _ string, _ platform.Source, _ string) (TurnResult, error) {
	close(e.started)
	<-ctx.Done()
	return TurnResult{}, ctx.Err()
}
func (blockEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (blockEngine) Info(context.Context, string) (SessionInfo, error) { return SessionInfo{}, nil }

// A turn whose lease is in doubt is stopped without an answer, and the
// queue hears why.
func TestStopQueued(t *testing.T) {
	a := &qAdapter{}
	e := blockEngine{started: make(chan struct{})}
	r, err := New(Options{Adapters: []platform.Adapter{a}, Engine: e, Auth: qAuth{true}})
	if err != nil {
		t.Fatal(err)
	}
	ev := platform.Event{Kind: platform.EventMessage, Text: "hello", Source: platform.Source{ChatID: "1", UserID: "1", ChatType: platform.ChatDM}}
	errc := make(chan error, 1)
	go func() { errc <- r.HandleQueued(context.Background(), "q", ev) }()
	<-e.started
	r.StopQueued(r.SessionKey("q", ev))
	if err := <-errc; !errors.Is(err, errLeaseLost) {
		t.Fatalf("HandleQueued after StopQueued: %v", err)
	}
	if got := a.texts(); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
}

func TestActsOnRunningTurn(t *testing.T) {
	for _, tc := range []struct {
		ev   platform.Event
		want bool
	}{
		{platform.Event{Kind: platform.EventButton, Data: buttonPrefix + "1:once"}, true},
		{platform.Event{Kind: platform.EventButton, Data: "other:1"}, false},
		{platform.Event{Kind: platform.EventMessage, Text: "/approve session"}, true},
		{platform.Event{Kind: platform.EventMessage, Text: "/deny"}, true},
		{platform.Event{Kind: platform.EventMessage, Text: "/stop@hermes_bot"}, true},
		{platform.Event{Kind: platform.EventMessage, Text: "/new"}, false},
		{platform.Event{Kind: platform.EventMessage, Text: "please approve"}, false},
		{platform.Event{Kind: platform.EventEdited, Text: "/stop"}, false},
	} {
		if got := ActsOnRunningTurn(tc.ev); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.ev, got, tc.want)
		}
	}
}
