package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/session/pgstore"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// brokenAdapter is recAdapter whose next sends fail for good (a 400), as a
// chat that is gone would.
type brokenAdapter struct {
	*recAdapter
	broken atomic.Int32
}

func (a *brokenAdapter) Send(ctx context.Context, m platform.Outbound) (platform.SendResult, error) {
	if a.broken.Add(-1) >= 0 {
		a.record("failed " + m.ChatID + " " + m.Text)
		return platform.SendResult{}, errors.New("400 Bad Request: chat not found")
	}
	return a.recAdapter.Send(ctx, m)
}

// echoEngine answers every turn at once.
type echoEngine struct{}

func (echoEngine) Turn(_ context.Context, _ string, _ platform.Source, text string) (gateway.TurnResult, error) {
	return gateway.TurnResult{SessionID: "s", Reply: "answer: " + text}, nil
}
func (echoEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (echoEngine) Info(context.Context, string) (gateway.SessionInfo, error) {
	return gateway.SessionInfo{}, nil
}

// ledgerProc is one gateway process of the test: a runner with the delivery
// ledger on the shared PostgreSQL, serving an owned Discord connection.
type ledgerProc struct {
	node   *cluster.Node
	store  *pgstore.Store
	inner  *brokenAdapter
	o      *ownedAdapter
	runner *gateway.Runner
	stop   context.CancelFunc
	done   chan error
}

func startLedgerProc(t *testing.T, url string, live, maxLive *atomic.Int32) *ledgerProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	st, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &ledgerProc{node: n, store: st, inner: &brokenAdapter{recAdapter: &recAdapter{name: "discord", live: live, maxLive: maxLive}},
		done: make(chan error, 1)}
	p.o = &ownedAdapter{inner: p.inner, role: roleDiscord, node: n, log: slog.New(slog.DiscardHandler)}
	owners := &gatewayOwners{node: n, owned: map[string]*ownedAdapter{"discord": p.o}}
	c := &gatewayCluster{cfg: fastCluster(url), node: n}
	ledger := c.ledger(storeLedger{st}, []platform.Adapter{p.o})
	owners.setLedger(ledger)
	p.runner, err = gateway.New(gateway.Options{Adapters: []platform.Adapter{p.o}, Engine: echoEngine{}, Auth: allowAll{}, Ledger: ledger,
		DrainTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	owners.setRunner(p.runner)
	rctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go func() { p.done <- p.runner.Run(rctx) }()
	t.Cleanup(func() { p.halt(); st.Close(); n.Close() })
	return p
}

func (p *ledgerProc) halt() {
	if p.stop != nil {
		p.stop()
		<-p.done
		p.stop = nil
	}
}

// answer runs a turn for chat on p, as a cluster worker does, and returns
// once its answer is recorded (and sent or queued).
func (p *ledgerProc) answer(t *testing.T, chat, text string) {
	t.Helper()
	ev := platform.Event{Kind: platform.EventMessage, Text: text,
		Source: platform.Source{Platform: "discord", ChatID: chat, UserID: "u-" + chat, ChatType: platform.ChatDM}}
	if err := p.runner.HandleQueued(context.Background(), "discord", ev); err != nil {
		t.Fatal(err)
	}
}

// sends are the sends p's platform was asked for (typing left out).
func (p *ledgerProc) sends() []string {
	var out []string
	for _, s := range p.inner.performed() {
		if !strings.HasPrefix(s, "typing ") {
			out = append(out, s)
		}
	}
	return out
}

// ledgerRow is chat's one ledger entry: its id and whether it is marked sent.
func ledgerRow(t *testing.T, p *ledgerProc, chat string) (id int64, sent bool) {
	t.Helper()
	ctx := context.Background()
	err := p.node.Pool().QueryRow(ctx, `SELECT id, sent_at IS NOT NULL FROM deliveries WHERE route::jsonb->>'chat_id' = $1`, chat).Scan(&id, &sent)
	if err != nil {
		t.Fatalf("the ledger entry of chat %s: %v", chat, err)
	}
	return id, sent
}

func countIn(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// An answer routed to the connection's owner is marked delivered by the
// owner once the platform took it, not by the process that queued it; one
// the owner could not send at all stays owed and is sent, once, by the next
// owner; one refused for now is sent when its claim expires, once.
func TestRoutedAnswerLedger(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx := context.Background()
	var live, maxLive atomic.Int32

	// An owner that serves nothing: what is routed meanwhile stays queued.
	away, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer away.Close()
	awayLeads := make(chan struct{})
	el := away.Elect(ctx, roleDiscord, func(lctx context.Context) { close(awayLeads); <-lctx.Done() })
	<-awayLeads
	a := startLedgerProc(t, url, &live, &maxLive)
	b := startLedgerProc(t, url, &live, &maxLive)
	a.answer(t, "c1", "hi")
	time.Sleep(500 * time.Millisecond)
	if _, sent := ledgerRow(t, a, "c1"); sent {
		t.Fatal("a routed answer no process sent is marked delivered")
	}
	// The owner hands over: the new owner sends the queued answer once,
	// from the outbox (not also as a redelivery: no recovered prefix).
	el.Stop()
	waitUntil(t, "a new owner", 10*time.Second, func() bool { return a.o.leading.Load() || b.o.leading.Load() })
	owner, other := a, b
	if b.o.leading.Load() {
		owner, other = b, a
	}
	waitUntil(t, "the queued answer to be sent and marked", 10*time.Second, func() bool { _, sent := ledgerRow(t, a, "c1"); return sent })
	time.Sleep(300 * time.Millisecond) // a second send would show by now
	if got := owner.sends(); len(got) != 1 || got[0] != "send c1 answer: hi" {
		t.Fatalf("the new owner sent %q, want the queued answer once", got)
	}

	// Refused for now (a rate limit): unmarked while it waits for its claim
	// to expire, then sent and marked, once.
	owner.inner.busy.Store(1)
	other.answer(t, "c3", "busy?")
	waitUntil(t, "the first try", 10*time.Second, func() bool { return countIn(owner.sends(), "refused c3 answer: busy?") == 1 })
	if _, sent := ledgerRow(t, a, "c3"); sent {
		t.Fatal("an answer the platform refused is marked delivered")
	}
	waitUntil(t, "the retry to be sent and marked", 15*time.Second, func() bool { _, sent := ledgerRow(t, a, "c3"); return sent })
	if n := countIn(owner.sends(), "send c3 answer: busy?"); n != 1 {
		t.Fatalf("the retried answer was sent %d times: %q", n, owner.sends())
	}

	// Failed for good: acked (no more tries from the outbox), left owed.
	owner.inner.broken.Store(1)
	other.answer(t, "c2", "gone?")
	waitUntil(t, "the failed send", 10*time.Second, func() bool { return countIn(owner.sends(), "failed c2 answer: gone?") == 1 })
	waitUntil(t, "the failed action to leave the outbox", 10*time.Second, func() bool {
		st, err := owner.node.Status(ctx)
		return err == nil && st.Outbox == 0
	})
	if _, sent := ledgerRow(t, a, "c2"); sent {
		t.Fatal("an answer the owner failed to send is marked delivered")
	}
	// The owner goes: the other takes over and redelivers what is owed, once.
	owner.halt()
	waitUntil(t, "the other to take over", 10*time.Second, other.o.leading.Load)
	recovered := "send c2 ♻️ Recovered reply — sent again after the gateway restarted; it may be a duplicate.\n\nanswer: gone?"
	waitUntil(t, "the owed answer to be redelivered", 10*time.Second, func() bool { return countIn(other.sends(), recovered) == 1 })
	waitUntil(t, "the redelivery to be marked", 10*time.Second, func() bool { _, sent := ledgerRow(t, a, "c2"); return sent })
	// A third owner finds nothing owed: what was sent is not sent again.
	c := startLedgerProc(t, url, &live, &maxLive)
	other.halt()
	waitUntil(t, "a third owner", 10*time.Second, c.o.leading.Load)
	time.Sleep(500 * time.Millisecond)
	if got := c.sends(); len(got) != 0 {
		t.Fatalf("the third owner sent %q; nothing was owed", got)
	}
	if n := countIn(other.sends(), recovered); n != 1 {
		t.Fatalf("the owed answer was redelivered %d times", n)
	}
	if m := maxLive.Load(); m != 1 {
		t.Fatalf("%d connections were up at once", m)
	}
}

// An owner that died after claiming a routed answer: if it had marked the
// answer (sent, then died before its ack) the next owner does not send it
// again; if it had not (died between its send and its mark, or before it
// sent) the next owner sends it once: from the outbox when the claim
// expires, not also as a redelivery.
func TestRoutedAnswerOwnerDiedMidAction(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	ctx := context.Background()
	var live, maxLive atomic.Int32
	a := startLedgerProc(t, url, &live, &maxLive)
	waitUntil(t, "a to own the connection", 10*time.Second, a.o.leading.Load)
	a.halt() // a's runner is gone; its store and ledger remain for the test
	// Two answers routed by a process that has no connection.
	l := storeLedger{a.store}
	ids := map[string]int64{}
	for _, chat := range []string{"marked", "unmarked"} {
		out := platform.Outbound{ChatID: chat, Text: "answer for " + chat}
		id, err := l.Record(ctx, "agent:main:discord:dm:"+chat, "discord", out)
		if err != nil {
			t.Fatal(err)
		}
		ids[chat] = id
		if err := a.node.Send(ctx, roleDiscord, mustEncode(t, ownerAction{Op: opSend, Out: &out, Ledger: id})); err != nil {
			t.Fatal(err)
		}
	}
	// A dying owner claims both, sends both, marks one, acks neither.
	dead, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	for range 2 {
		if act, err := dead.ClaimAction(ctx, roleDiscord); err != nil || act == nil {
			t.Fatalf("the dying owner's claim: %v %v", act, err)
		}
	}
	if err := l.Delivered(ctx, ids["marked"]); err != nil {
		t.Fatal(err)
	}
	heir := startLedgerProc(t, url, &live, &maxLive)
	waitUntil(t, "the unmarked answer to be sent and marked", 15*time.Second, func() bool { _, sent := ledgerRow(t, heir, "unmarked"); return sent })
	waitUntil(t, "both claims to be performed", 10*time.Second, func() bool {
		st, err := heir.node.Status(ctx)
		return err == nil && st.Outbox == 0
	})
	time.Sleep(300 * time.Millisecond)
	if got := heir.sends(); len(got) != 1 || got[0] != "send unmarked answer for unmarked" {
		t.Fatalf("the heir sent %q, want only the unmarked answer, once", got)
	}
}

func TestRecentSends(t *testing.T) {
	var r recentSends
	if !r.begin(1) {
		t.Fatal("a first send was refused")
	}
	if r.begin(1) {
		t.Fatal("a send in hand was claimed twice")
	}
	r.end(1, false)
	if !r.begin(1) {
		t.Fatal("a failed send could not be tried again")
	}
	r.end(1, true)
	if r.begin(1) {
		t.Fatal("a send just made was claimed again")
	}
	if !r.begin(2) {
		t.Fatal("another answer was refused")
	}
}
