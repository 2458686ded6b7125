package cluster

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Two candidates: exactly one leads; when the leader's connection is cut
// (the server terminates it) the leader is told to stop and the other takes
// over; actions sent from anywhere reach whoever leads.
func TestElectionTakeoverAndOutbox(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	var mu sync.Mutex
	got := map[string][]string{}
	serve := func(n *Node) func(context.Context) {
		return func(lctx context.Context) {
			for {
				act, err := n.NextAction(lctx, "discord")
				if err != nil {
					return
				}
				mu.Lock()
				got[n.ID()] = append(got[n.ID()], string(act.Payload))
				mu.Unlock()
				if err := n.Ack(lctx, act); err != nil && lctx.Err() == nil {
					t.Error(err)
				}
			}
		}
	}
	ea := a.Elect(ctx, "discord", serve(a))
	defer ea.Stop()
	changesA := ea.Changes()
	waitFor(ctx, t, "a to lead", ea.Leading)
	eb := b.Elect(ctx, "discord", serve(b))
	defer eb.Stop()
	time.Sleep(500 * time.Millisecond) // five of b's attempts
	if eb.Leading() {
		t.Fatal("two leaders")
	}
	st, err := b.Status(ctx)
	if err != nil || st.Leaders["discord"] != a.ID() {
		t.Fatalf("status leaders %v %v; want a", st.Leaders, err)
	}
	if err := b.Send(ctx, "discord", []byte("one")); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "a to perform the action", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[a.ID()]) == 1
	})
	if v := <-changesA; !v {
		t.Fatal("a's first change was not a gain")
	}
	// The server drops a's leader connection, as after a network cut.
	if _, err := b.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'hermes-leader discord' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)`); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-changesA:
		if v {
			t.Fatal("a gained instead of losing")
		}
	case <-ctx.Done():
		t.Fatal("a was not told it lost leadership")
	}
	waitFor(ctx, t, "b to take over", eb.Leading)
	if ea.Leading() {
		t.Fatal("a still leads after losing its connection")
	}
	if err := a.Send(ctx, "discord", []byte("two")); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "b to perform the action", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[b.ID()]) == 1
	})
	mu.Lock()
	if strings.Join(got[a.ID()], ",") != "one" || strings.Join(got[b.ID()], ",") != "two" {
		t.Fatalf("actions: %v", got)
	}
	mu.Unlock()
	st, err = a.Status(ctx)
	if err != nil || st.Leaders["discord"] != b.ID() || st.Outbox != 0 {
		t.Fatalf("status after takeover: %+v %v", st, err)
	}
	if err := a.Send(ctx, "", nil); err == nil {
		t.Fatal("send to no role accepted")
	}
}

// Stop gives leadership up at once (unlock), so the follower does not wait
// for an expiry.
func TestElectionStopHandsOver(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	ea := a.Elect(ctx, "telegram-poll", func(ctx context.Context) { <-ctx.Done() })
	waitFor(ctx, t, "a to lead", ea.Leading)
	eb := b.Elect(ctx, "telegram-poll", func(ctx context.Context) { <-ctx.Done() })
	defer eb.Stop()
	ea.Stop()
	if ea.Leading() {
		t.Fatal("still leading after Stop")
	}
	waitFor(ctx, t, "b to lead", eb.Leading)
	if eb.Gained() != 1 || ea.Gained() != 1 {
		t.Fatalf("gained a=%d b=%d", ea.Gained(), eb.Gained())
	}
}

// Status shows members, what they hold and lead, the queue's depth and the
// oldest item's age on the database's clock; Drain stops claiming, waits for
// the item in flight and hands back leases.
func TestStatusAndDrain(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	for i, k := range []string{"x", "y", "y"} {
		if _, err := a.Enqueue(ctx, "t", string(rune('0'+i)), k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.pool.Exec(ctx, "UPDATE cluster_queue SET enqueued_at = now() - interval '90 seconds' WHERE session_key = 'x'"); err != nil {
		t.Fatal(err)
	}
	x, err := a.Claim(ctx)
	if err != nil || x == nil || x.SessionKey != "x" {
		t.Fatalf("claim: %+v %v", x, err)
	}
	y, err := a.Claim(ctx)
	if err != nil || y == nil {
		t.Fatal(err)
	}
	st, err := b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.QueueDepth != 3 || st.Running != 2 || st.OldestAge < 90*time.Second || st.OldestAge > 5*time.Minute {
		t.Fatalf("status: %+v", st)
	}
	var ids []string
	for _, m := range st.Members {
		ids = append(ids, m.ID)
		if !m.Alive || m.Host == "" || m.PID == 0 {
			t.Errorf("member %+v", m)
		}
		if m.ID == a.ID() && strings.Join(m.LeaseKeys, ",") != "x,y" {
			t.Errorf("a holds %v", m.LeaseKeys)
		}
	}
	want := []string{a.ID(), b.ID()}
	sort.Strings(ids)
	sort.Strings(want)
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("members %v, want %v", ids, want)
	}
	// Drain: x finishes during the drain, y is still running when the
	// drain's deadline passes and is handed back to b.
	drained := make(chan error, 1)
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	go func() { drained <- a.Drain(dctx) }()
	time.Sleep(100 * time.Millisecond)
	if _, err := a.Claim(ctx); err != ErrDraining {
		t.Fatalf("claim while draining: %v", err)
	}
	if err := a.Done(ctx, x); err != nil {
		t.Fatal(err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	got, err := b.Claim(ctx) // at once: no waiting for the expiry
	if err != nil || got == nil || got.ID != y.ID || got.Attempt != 2 {
		t.Fatalf("after drain: %+v %v", got, err)
	}
	if err := a.Done(ctx, y); err != ErrLeaseLost {
		t.Fatalf("drained claim's Done: %v", err)
	}
	st, err = b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.ID == a.ID() && (!m.Draining || m.Leases != 0) {
			t.Errorf("drained member %+v", m)
		}
	}
}

// LastHeld: a leader that steps down leaves no trace; one that died (its
// row still says it leads) leaves its last heartbeat; the asker's own row
// never counts.
func TestLastHeld(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	ea := a.Elect(ctx, "discord", func(lctx context.Context) { <-lctx.Done() })
	waitFor(ctx, t, "a to lead", ea.Leading)
	// b sees a leading now: a's last heartbeat, just now.
	now, held, err := b.LastHeld(ctx, "discord")
	if err != nil || held.IsZero() || now.Sub(held) < 0 || now.Sub(held) > 5*time.Second {
		t.Fatalf("while a leads: now %v, held %v, %v", now, held, err)
	}
	// a does not count itself.
	if _, held, err := a.LastHeld(ctx, "discord"); err != nil || !held.IsZero() {
		t.Fatalf("a's own row counted: %v, %v", held, err)
	}
	// a steps down: its row says so at once.
	ea.Stop()
	if _, held, err := b.LastHeld(ctx, "discord"); err != nil || !held.IsZero() {
		t.Fatalf("after a stepped down: held %v, %v", held, err)
	}
	// A process that died leading: its row is left as it was.
	if _, err := b.pool.Exec(ctx, `INSERT INTO cluster_members (id, host, pid, last_seen, leads)
		VALUES ('dead', 'gone', 1, now() - interval '12 seconds', '{discord}')`); err != nil {
		t.Fatal(err)
	}
	now, held, err = b.LastHeld(ctx, "discord")
	if d := now.Sub(held); err != nil || d < 11*time.Second || d > 19*time.Second {
		t.Fatalf("dead leader: held %v before now, %v; want 12s", d, err)
	}
	if _, held, _ := b.LastHeld(ctx, "telegram-poll"); !held.IsZero() {
		t.Fatalf("another role: %v", held)
	}
}
