package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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
	r.StopQueued(r.SessionKey("q", ev), "")
	if err := <-errc; !errors.Is(err, errLeaseLost) {
		t.Fatalf("HandleQueued after StopQueued: %v", err)
	}
	if got := a.texts(); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
}

// qLedger is a ledger whose Record can fail, or run a hook (a lease lost
// while the database took its time).
type qLedger struct {
	mu        sync.Mutex
	fail      error
	onRecord  func()
	delivered []int64
}

func (l *qLedger) Record(context.Context, string, string, platform.Outbound) (int64, error) {
	if l.onRecord != nil {
		l.onRecord()
	}
	return 7, l.fail
}
func (l *qLedger) Attempt(context.Context, int64) error { return nil }
func (l *qLedger) Delivered(_ context.Context, ids ...int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delivered = append(l.delivered, ids...)
	return nil
}
func (l *qLedger) Unsent(context.Context, string) ([]Unsent, error) { return nil, nil }

// A queued answer goes out only once recorded and while its lease is held;
// otherwise nothing is sent and HandleQueued says so, for the queue to
// deliver the update again (its next delivery answers). One recorded after
// the lease was lost is marked, so no restart sends it later.
func TestQueuedAnswerNotSent(t *testing.T) {
	var held atomic.Bool
	tests := []struct {
		name          string
		ledger        *qLedger
		heldAtFirst   bool
		wantSent      bool
		wantDelivered bool
	}{
		{"recorded, lease held", &qLedger{}, true, true, false},
		{"the ledger cannot record it", &qLedger{fail: errors.New("database away")}, true, false, false},
		{"the lease lapsed before", &qLedger{}, false, false, false},
		{"the lease lapsed while recording", &qLedger{onRecord: func() { held.Store(false) }}, true, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			held.Store(tc.heldAtFirst)
			a := &qAdapter{}
			r, err := New(Options{Adapters: []platform.Adapter{a}, Engine: qEngine{}, Auth: qAuth{true}, Ledger: tc.ledger,
				LeaseHeld: func(d string) bool { return d != "q:1" || held.Load() }})
			if err != nil {
				t.Fatal(err)
			}
			ev := platform.Event{Kind: platform.EventMessage, Text: "hello", Delivery: "q:1", Source: platform.Source{ChatID: "1", UserID: "1", ChatType: platform.ChatDM}}
			err = r.HandleQueued(context.Background(), "q", ev)
			sent := len(a.texts()) > 0
			if sent != tc.wantSent || (err == nil) != tc.wantSent {
				t.Fatalf("sent %q, HandleQueued %v; want sent %v", a.texts(), err, tc.wantSent)
			}
			if !tc.wantSent && !errors.Is(err, errNotSent) {
				t.Errorf("HandleQueued: %v, want errNotSent", err)
			}
			tc.ledger.mu.Lock()
			delivered := len(tc.ledger.delivered) > 0
			tc.ledger.mu.Unlock()
			if tc.wantDelivered && !delivered {
				t.Errorf("the unsent recorded answer was not marked")
			}
		})
	}
}

type deliveryEngine struct {
	mu   sync.Mutex
	got  []TurnDelivery
	text []string
}

func (e *deliveryEngine) Turn(ctx context.Context, _ string, _ platform.Source, text string) (TurnResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, TurnDeliveryFrom(ctx))
	e.text = append(e.text, text)
	return TurnResult{Reply: "ok"}, nil
}
func (*deliveryEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (*deliveryEngine) Info(context.Context, string) (SessionInfo, error) { return SessionInfo{}, nil }

// A queued event's delivery reaches its turn's ctx; a stored one's text is
// not sent again (the turn continues from the stored message).
func TestQueuedTurnDelivery(t *testing.T) {
	for _, tc := range []struct {
		ev       platform.Event
		want     TurnDelivery
		wantText string
	}{
		{platform.Event{Text: "hi", Delivery: "telegram:5"}, TurnDelivery{ID: "telegram:5"}, "hi"},
		{platform.Event{Text: "hi", Delivery: "telegram:6", Stored: true}, TurnDelivery{ID: "telegram:6", Stored: true}, ""},
		{platform.Event{Text: "hi"}, TurnDelivery{}, "hi"},
	} {
		e := &deliveryEngine{}
		r, err := New(Options{Adapters: []platform.Adapter{&qAdapter{}}, Engine: e, Auth: qAuth{true}})
		if err != nil {
			t.Fatal(err)
		}
		tc.ev.Kind = platform.EventMessage
		tc.ev.Source = platform.Source{ChatID: "1", UserID: "1", ChatType: platform.ChatDM}
		if err := r.HandleQueued(context.Background(), "q", tc.ev); err != nil {
			t.Fatal(err)
		}
		if len(e.got) != 1 || e.got[0] != tc.want || e.text[0] != tc.wantText {
			t.Errorf("%+v: the turn got %+v, %q; want %+v, %q", tc.ev, e.got, e.text, tc.want, tc.wantText)
		}
	}
}

// staleEngine blocks the turn of "stale" until it is stopped and answers
// the rest.
type staleEngine struct{ started chan struct{} }

func (e staleEngine) Turn(ctx context.Context, _ string, _ platform.Source, text string) (TurnResult, error) {
	if text == "stale" {
		close(e.started)
		<-ctx.Done()
		return TurnResult{}, ctx.Err()
	}
	return TurnResult{Reply: "re: " + text}, nil
}
func (staleEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (staleEngine) Info(context.Context, string) (SessionInfo, error) { return SessionInfo{}, nil }

// A stale turn (its lease lost) unwinding in a lane while a newer item of
// the conversation waits behind it: stopping the newer delivery leaves the
// stale turn alone, stopping the stale one fails only the stale item, and
// the newer one is answered.
func TestStaleTurnBesideNewerItem(t *testing.T) {
	a := &qAdapter{}
	e := staleEngine{started: make(chan struct{})}
	r, err := New(Options{Adapters: []platform.Adapter{a}, Engine: e, Auth: qAuth{true}})
	if err != nil {
		t.Fatal(err)
	}
	src := platform.Source{ChatID: "1", UserID: "1", ChatType: platform.ChatDM}
	stale := platform.Event{Kind: platform.EventMessage, Text: "stale", Delivery: "q:1", Source: src}
	newer := platform.Event{Kind: platform.EventMessage, Text: "newer", Delivery: "q:2", Source: src}
	staleErr, newerErr := make(chan error, 1), make(chan error, 1)
	go func() { staleErr <- r.HandleQueued(context.Background(), "q", stale) }()
	<-e.started
	go func() { newerErr <- r.HandleQueued(context.Background(), "q", newer) }()
	key := r.SessionKey("q", stale)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		queued := len(r.lanes[key].pending)
		r.mu.Unlock()
		if queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the newer item never queued behind the stale turn")
		}
	}
	r.StopQueued(key, "q:2")
	select {
	case err := <-staleErr:
		t.Fatalf("the stale turn stopped for another delivery: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	r.StopQueued(key, "q:1")
	if err := <-staleErr; !errors.Is(err, errLeaseLost) {
		t.Errorf("the stale item: %v, want errLeaseLost", err)
	}
	if err := <-newerErr; err != nil {
		t.Errorf("the newer item: %v", err)
	}
	if got := a.texts(); len(got) != 1 || got[0] != "re: newer" {
		t.Errorf("sent %q, want only the newer item's answer (no busy notice)", got)
	}
}
