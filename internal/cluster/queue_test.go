package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Migrate(ctx, pool) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT version FROM cluster_schema").Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("version %d, %v; want %d", v, err, SchemaVersion())
	}
	if _, err := pool.Exec(ctx, "UPDATE cluster_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err == nil || !strings.Contains(err.Error(), "upgrade hermes") {
		t.Fatalf("newer schema: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no database URL"},
		{Config{URL: "postgres:///x", LeaseTTL: time.Second, Heartbeat: 2 * time.Second}, "not shorter"},
		{Config{URL: "::not a url"}, "database URL"},
	} {
		_, err := Open(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestEnqueueDedupes(t *testing.T) {
	n := open(t, fast(server(t).DB(t)))
	ctx := testCtx(t, time.Minute)
	for i, tc := range []struct {
		platform, id string
		want         bool
	}{
		{"telegram", "100", true},
		{"telegram", "100", false}, // the webhook retried
		{"discord", "100", true},   // another platform's id space
		{"telegram", "101", true},
	} {
		got, err := n.Enqueue(ctx, tc.platform, tc.id, "k", []byte(strconv.Itoa(i)))
		if err != nil || got != tc.want {
			t.Fatalf("enqueue %s/%s: %v, %v; want %v", tc.platform, tc.id, got, err, tc.want)
		}
	}
	// Duplicates racing each other: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := n.Enqueue(ctx, "telegram", "555", "k2", nil)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st, err := n.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if wins != 1 || st.QueueDepth != 4 {
		t.Fatalf("racing duplicates: %d queued, depth %d; want 1 and 4", wins, st.QueueDepth)
	}
	if _, err := n.Enqueue(ctx, "", "1", "k", nil); err == nil {
		t.Fatal("an empty platform was accepted")
	}
}

// MarkSeen shares Enqueue's dedupe table: an id seen either way is not fresh
// again, and of racing callers exactly one gets fresh.
func TestMarkSeen(t *testing.T) {
	n := open(t, fast(server(t).DB(t)))
	ctx := testCtx(t, time.Minute)
	if _, err := n.Enqueue(ctx, "telegram", "7", "k", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		platform, id string
		want         bool
	}{
		{"telegram", "7", false}, // queued by the webhook already
		{"telegram", "8", true},
		{"telegram", "8", false},
		{"discord", "8", true},
	} {
		got, err := n.MarkSeen(ctx, tc.platform, tc.id)
		if err != nil || got != tc.want {
			t.Fatalf("mark seen %s/%s: %v, %v; want %v", tc.platform, tc.id, got, err, tc.want)
		}
	}
	var wg sync.WaitGroup
	var fresh atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := n.MarkSeen(ctx, "discord", "race")
			if err != nil {
				t.Error(err)
			}
			if ok {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	if fresh.Load() != 1 {
		t.Fatalf("racing callers: %d got fresh, want 1", fresh.Load())
	}
	if _, err := n.MarkSeen(ctx, "discord", ""); err == nil {
		t.Fatal("an empty id was accepted")
	}
}

// One conversation: its second item is not claimable while the first runs,
// items of other conversations are; order is enqueue order.
func TestClaimHonoursLeaseAndOrder(t *testing.T) {
	n := open(t, fast(server(t).DB(t)))
	ctx := testCtx(t, time.Minute)
	for i, k := range []string{"a", "a", "b", "a"} {
		if _, err := n.Enqueue(ctx, "t", strconv.Itoa(i), k, []byte(k+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	claim := func() *Item {
		t.Helper()
		it, err := n.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	a0, b2 := claim(), claim()
	if a0 == nil || string(a0.Payload) != "a0" || a0.Attempt != 1 || b2 == nil || string(b2.Payload) != "b2" {
		t.Fatalf("first claims: %+v, %+v", a0, b2)
	}
	if it := claim(); it != nil {
		t.Fatalf("claimed %q while a's first item runs", it.Payload)
	}
	if err := n.Done(ctx, a0); err != nil {
		t.Fatal(err)
	}
	if err := n.Done(ctx, a0); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("second Done: %v", err)
	}
	a1 := claim()
	if a1 == nil || string(a1.Payload) != "a1" {
		t.Fatalf("after done: %+v", a1)
	}
	for _, it := range []*Item{a1, b2} {
		if err := n.Done(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if a3 := claim(); a3 == nil || string(a3.Payload) != "a3" {
		t.Fatalf("last: %+v", a3)
	}
}

// Fail retries after the delay, counting attempts; at MaxAttempts the item
// is dead-lettered and the conversation's next item runs.
func TestFailRetriesThenDeadLetters(t *testing.T) {
	cfg := fast(server(t).DB(t))
	cfg.RetryDelay = 300 * time.Millisecond
	n := open(t, cfg)
	ctx := testCtx(t, time.Minute)
	for i, p := range []string{"poison", "next"} {
		if _, err := n.Enqueue(ctx, "t", strconv.Itoa(i), "k", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; attempt <= cfg.MaxAttempts; attempt++ {
		it, err := n.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(it.Payload) != "poison" || it.Attempt != attempt {
			t.Fatalf("delivery %d: %q attempt %d", attempt, it.Payload, it.Attempt)
		}
		if attempt > 1 && it.LastError != fmt.Sprintf("boom %d", attempt-1) {
			t.Fatalf("last error %q", it.LastError)
		}
		if attempt == 1 {
			// The retry delay holds the item back (and the key's next one).
			if again, err := n.Claim(ctx); err != nil || again != nil {
				t.Fatalf("claimed during a run: %+v %v", again, err)
			}
		}
		dead, err := n.Fail(ctx, it, fmt.Errorf("boom %d", attempt))
		if err != nil || dead != (attempt == cfg.MaxAttempts) {
			t.Fatalf("fail %d: dead %v, %v", attempt, dead, err)
		}
		if attempt == 1 {
			if again, err := n.Claim(ctx); err != nil || again != nil {
				t.Fatalf("claimed inside the retry delay: %+v %v", again, err)
			}
		}
	}
	it, err := n.Next(ctx)
	if err != nil || string(it.Payload) != "next" {
		t.Fatalf("after the dead letter: %+v %v", it, err)
	}
	dead, err := n.Dead(ctx)
	if err != nil || len(dead) != 1 || string(dead[0].Payload) != "poison" || dead[0].Reason != "boom 3" || dead[0].Attempt != 3 {
		t.Fatalf("dead letters: %+v %v", dead, err)
	}
}

// A holder that stops heartbeating loses the lease after the expiry; the
// item is delivered again (attempt 2) and the old claim's Done is refused.
// An item that keeps killing its worker is dead-lettered after MaxAttempts.
func TestExpiredLeaseIsTakenOver(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	b := open(t, fast(url))
	acfg := fast(url)
	var skew atomic.Int64 // a's local clock runs ahead by this much
	acfg.Now = func() time.Time { return time.Unix(0, time.Now().UnixNano()+skew.Load()) }
	a, err := Open(ctx, acfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Enqueue(ctx, "t", "1", "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	it, err := a.Claim(ctx)
	if err != nil || it == nil {
		t.Fatalf("claim: %+v %v", it, err)
	}
	a.stop() // heartbeats stop: a hung or cut-off process
	a.bg.Wait()
	if !a.Fresh() {
		t.Fatal("stale at once")
	}
	skew.Store(int64(acfg.LeaseTTL))
	if a.Fresh() {
		t.Fatal("a still thinks its leases are its own a lease expiry after its last heartbeat")
	}
	if again, err := b.Claim(ctx); err != nil || again != nil {
		t.Fatalf("taken before expiry: %+v %v", again, err)
	}
	got, err := b.Next(ctx)
	if err != nil || got.ID != it.ID || got.Attempt != 2 || got.holder != b.ID() {
		t.Fatalf("takeover: %+v %v", got, err)
	}
	if err := a.Done(ctx, it); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale Done: %v", err)
	}
	a.pool.Close()
	// b "dies" too, and again: the third delivery is the last.
	if _, err := b.pool.Exec(ctx, "UPDATE cluster_leases SET expires_at = now()"); err != nil {
		t.Fatal(err)
	}
	third, err := b.Claim(ctx)
	if err != nil || third == nil || third.Attempt != 3 {
		t.Fatalf("third: %+v %v", third, err)
	}
	if _, err := b.pool.Exec(ctx, "UPDATE cluster_leases SET expires_at = now()"); err != nil {
		t.Fatal(err)
	}
	if fourth, err := b.Claim(ctx); err != nil || fourth != nil {
		t.Fatalf("fourth delivery: %+v %v", fourth, err)
	}
	dead, err := b.Dead(ctx)
	if err != nil || len(dead) != 1 || !strings.Contains(dead[0].Reason, "abandoned after 3 deliveries") {
		t.Fatalf("dead: %+v %v", dead, err)
	}
}

// A process claims only the platforms it serves (all until Serve is called).
func TestServeFiltersPlatforms(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	disc, all, none := open(t, fast(url)), open(t, fast(url)), open(t, fast(url))
	disc.Serve("discord")
	none.Serve()
	if _, err := all.Enqueue(ctx, "telegram", "1", "telegram:1", []byte("t")); err != nil {
		t.Fatal(err)
	}
	if _, err := all.Enqueue(ctx, "discord", "1", "discord:1", []byte("d")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		n    *Node
		want string // the platform claimed, "" for nothing
	}{
		{"serves nothing", none, ""},
		{"discord only, past the older telegram item", disc, "discord"},
		{"discord only, none left", disc, ""},
		{"every platform", all, "telegram"},
	} {
		it, err := tc.n.Claim(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ""
		if it != nil {
			got = it.Platform
		}
		if got != tc.want {
			t.Fatalf("%s: claimed %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A claim that committed on the server but whose answer never reached its
// process (the server restarted mid-reply) leaves a lease of a live,
// heartbeating process that nobody works on: it must expire like a dead
// holder's, not be renewed forever, so the item is delivered again.
func TestOrphanedClaimExpires(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	if _, err := b.Enqueue(ctx, "t", "1", "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// a's claim statement, run without a's bookkeeping: its answer "lost".
	var won bool
	if err := a.pool.QueryRow(ctx, claimSQL, a.ID(), a.cfg.LeaseTTL.Milliseconds(), []string(nil)).Scan(&won,
		new(int64), new(string), new(string), new(string), new([]byte), new(time.Time), new(int), new(string)); err != nil || !won {
		t.Fatalf("claim: %v %v", won, err)
	}
	if again, err := b.Claim(ctx); err != nil || again != nil {
		t.Fatalf("taken while the lease is live: %+v %v", again, err)
	}
	// a keeps heartbeating (every 200 ms, lease 2 s): the item still comes back.
	got, err := b.Next(ctx)
	if err != nil || got == nil || got.Attempt != 2 || got.holder != b.ID() {
		t.Fatalf("redelivery of the orphaned claim: %+v %v", got, err)
	}
	if !a.Fresh() {
		t.Fatal("a stopped heartbeating; the test proves nothing")
	}
	if err := b.Done(ctx, got); err != nil {
		t.Fatal(err)
	}
}

// An idle worker is woken by NOTIFY: with a poll of an hour, only the
// notification can bring it the item in time.
func TestNotifyWakesIdleWorker(t *testing.T) {
	url := server(t).DB(t)
	cfg := fast(url)
	cfg.Poll = time.Hour
	w := open(t, cfg)
	p := open(t, fast(url))
	ctx := testCtx(t, 30*time.Second)
	// Wait for the listener's first wake-up to be consumed, so the worker
	// below is really idle.
	time.Sleep(300 * time.Millisecond)
	if it, err := w.Claim(ctx); err != nil || it != nil {
		t.Fatalf("empty queue: %+v %v", it, err)
	}
	got := make(chan *Item, 1)
	go func() {
		it, err := w.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	time.Sleep(200 * time.Millisecond)
	if _, err := p.Enqueue(ctx, "t", "1", "k", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	select {
	case it := <-got:
		if it == nil || string(it.Payload) != "hi" {
			t.Fatalf("woken with %+v", it)
		}
	case <-ctx.Done():
		t.Fatal("the NOTIFY did not wake the idle worker")
	}
}

// A worker whose notifications are lost (no LISTEN) still finds work by
// polling.
func TestPollingWithoutNotify(t *testing.T) {
	url := server(t).DB(t)
	cfg := fast(url)
	cfg.NoListen = true
	w := open(t, cfg)
	p := open(t, fast(url))
	ctx := testCtx(t, 30*time.Second)
	done := make(chan error, 1)
	go func() {
		for i := range 5 {
			it, err := w.Next(ctx)
			if err != nil {
				done <- err
				return
			}
			if string(it.Payload) != strconv.Itoa(i) {
				done <- fmt.Errorf("item %d: %q", i, it.Payload)
				return
			}
			if err := w.Done(ctx, it); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range 5 {
		time.Sleep(50 * time.Millisecond)
		if _, err := p.Enqueue(ctx, "t", strconv.Itoa(i), "k", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// ledger records what the workers did: per key, the sequence handled, and a
// violation whenever two items of one key ran at once.
type ledger struct {
	mu         sync.Mutex
	running    map[string]bool
	seq        map[string][]int
	violations []string
}

func newLedger() *ledger { return &ledger{running: map[string]bool{}, seq: map[string][]int{}} }

func (l *ledger) begin(it *Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[it.SessionKey] {
		l.violations = append(l.violations, fmt.Sprintf("%s: item %d ran beside another of its key", it.SessionKey, it.ID))
	}
	l.running[it.SessionKey] = true
}

func (l *ledger) end(it *Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running[it.SessionKey] = false
	i, _ := strconv.Atoi(strings.SplitN(string(it.Payload), ":", 2)[1])
	l.seq[it.SessionKey] = append(l.seq[it.SessionKey], i)
}

// check: every key saw 0..per-1 in order, each at most twice in a row (the
// one redelivery allowed after a crash or a restart), maxDup duplicates at
// most in all.
func (l *ledger) check(t *testing.T, keys, per, maxDup int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.violations {
		t.Error(v)
	}
	if len(l.seq) != keys {
		t.Fatalf("%d keys handled, want %d", len(l.seq), keys)
	}
	dups := 0
	for k, s := range l.seq {
		var collapsed []int
		for j, v := range s {
			if j > 0 && s[j-1] == v {
				dups++
				if j > 1 && s[j-2] == v {
					t.Errorf("%s: item %d handled three times", k, v)
				}
				continue
			}
			collapsed = append(collapsed, v)
		}
		if len(collapsed) != per {
			t.Errorf("%s: handled %v", k, s)
			continue
		}
		for j, v := range collapsed {
			if v != j {
				t.Errorf("%s: out of order: %v", k, s)
				break
			}
		}
	}
	if dups > maxDup {
		t.Errorf("%d redeliveries, at most %d allowed", dups, maxDup)
	}
}

// runWorkers runs count workers on n until ctx ends.
func runWorkers(ctx context.Context, wg *sync.WaitGroup, n *Node, count int, l *ledger, errs chan<- error) {
	for range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := n.Next(ctx)
				if err != nil {
					return
				}
				l.begin(it)
				if rand.IntN(4) == 0 {
					time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				}
				l.end(it)
				if err := finish(ctx, n, it); err != nil && ctx.Err() == nil {
					errs <- fmt.Errorf("done %d: %w", it.ID, err)
				}
			}
		}()
	}
}

func waitEmpty(ctx context.Context, t *testing.T, n *Node, want int, l *ledger) {
	t.Helper()
	for {
		st, err := n.Status(ctx)
		if err == nil && st.QueueDepth == 0 {
			l.mu.Lock()
			handled := 0
			for _, s := range l.seq {
				handled += len(s)
			}
			l.mu.Unlock()
			if handled >= want {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("queue not drained: %+v %v", st, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// 300 conversations × 10 items, enqueued concurrently, with every update
// also delivered twice (a retrying load balancer), worked by 3 nodes × 6
// goroutines: each item handled exactly once, per key in order, never two of
// one key at once.
func TestManyWorkersExactlyOnceInOrder(t *testing.T) {
	const keys, per = 300, 10
	url := server(t).DB(t)
	ctx := testCtx(t, 3*time.Minute)
	nodes := []*Node{open(t, fast(url)), open(t, fast(url)), open(t, fast(url))}
	l := newLedger()
	errs := make(chan error, 100)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, n := range nodes {
		runWorkers(wctx, &wg, n, 6, l, errs)
	}
	var pg sync.WaitGroup
	for p := range 10 {
		pg.Add(1)
		go func() {
			defer pg.Done()
			n := nodes[p%len(nodes)]
			for k := p; k < keys; k += 10 {
				key := fmt.Sprintf("chat%d", k)
				for i := range per {
					id := strconv.Itoa(k*per + i)
					for range 2 {
						if err := enqueue(ctx, n, "telegram", id, key, []byte(key+":"+strconv.Itoa(i))); err != nil {
							errs <- err
							return
						}
					}
				}
			}
		}()
	}
	pg.Wait()
	waitEmpty(ctx, t, nodes[0], keys*per, l)
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l.check(t, keys, per, 0)
}

// The server crashes and restarts under load: enqueuers and workers ride
// through on retries and the pool's reconnects; nothing is lost, and any
// redelivery is the one allowed.
func TestServerRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server")
	}
	const keys, per = 60, 10
	c := server(t)
	url := c.DB(t)
	ctx := testCtx(t, 3*time.Minute)
	mk := func() Config { cfg := fast(url); cfg.LeaseTTL = 5 * time.Second; cfg.MaxAttempts = 5; return cfg }
	nodes := []*Node{open(t, mk()), open(t, mk())}
	l := newLedger()
	errs := make(chan error, 100)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, n := range nodes {
		runWorkers(wctx, &wg, n, 4, l, errs)
	}
	var pg sync.WaitGroup
	halfway := make(chan struct{})
	for p := range 4 {
		pg.Add(1)
		go func() {
			defer pg.Done()
			n := nodes[p%len(nodes)]
			for i := range per {
				if p == 0 && i == per/2 {
					close(halfway)
				}
				for k := p; k < keys; k += 4 {
					key := fmt.Sprintf("chat%d", k)
					if err := enqueue(ctx, n, "telegram", strconv.Itoa(k*per+i), key, []byte(key+":"+strconv.Itoa(i))); err != nil {
						errs <- err
						return
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	<-halfway
	if err := c.Restart("immediate"); err != nil {
		t.Fatal(err)
	}
	pg.Wait()
	waitEmpty(ctx, t, nodes[0], keys*per, l)
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l.check(t, keys, per, 2*4)
	dead, err := nodes[0].Dead(ctx)
	if err != nil || len(dead) != 0 {
		t.Fatalf("dead letters after a restart: %+v %v", dead, err)
	}
}

// After a server restart the listener reconnects: a worker that only NOTIFY
// can wake (its poll is an hour) still gets the next item.
func TestListenerReconnectsAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server")
	}
	c := server(t)
	url := c.DB(t)
	cfg := fast(url)
	cfg.Poll = time.Hour
	w := open(t, cfg)
	ctx := testCtx(t, time.Minute)
	if err := c.Restart("immediate"); err != nil {
		t.Fatal(err)
	}
	got := make(chan *Item, 1)
	go func() {
		it, err := w.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	p := open(t, fast(url))
	// Let the listener's reconnect wake-up come and go first.
	time.Sleep(time.Second)
	if err := enqueue(ctx, p, "t", "1", "k", []byte("after")); err != nil {
		t.Fatal(err)
	}
	select {
	case it := <-got:
		if it == nil || string(it.Payload) != "after" {
			t.Fatalf("woken with %+v", it)
		}
	case <-ctx.Done():
		t.Fatal("no wake-up after the restart: the listener did not reconnect")
	}
}

// Holds follows each claim: true while heartbeats renew its lease (well past
// one expiry), false once the lease lapsed on the server, and never true
// again after it: the heartbeat renews only live leases, so a lapsed one is
// not revived for a worker that gave it up, and another node claims it.
func TestHoldsAndLapsedLeases(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	a, b := open(t, fast(url)), open(t, fast(url))
	if _, err := a.Enqueue(ctx, "t", "1", "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	it, err := a.Claim(ctx)
	if err != nil || it == nil {
		t.Fatalf("claim: %+v %v", it, err)
	}
	if !a.Holds(it) {
		t.Fatal("not held at once")
	}
	time.Sleep(a.cfg.LeaseTTL + 500*time.Millisecond)
	if !a.Holds(it) {
		t.Fatal("not held after a lease expiry of heartbeats")
	}
	if other := (&Item{ID: it.ID, Attempt: it.Attempt + 1}); a.Holds(other) {
		t.Fatal("another claim of the item is held")
	}
	// The lease lapses on the server (as when a's heartbeats did not reach it).
	if _, err := a.pool.Exec(ctx, "UPDATE cluster_leases SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	waitFor(testCtx(t, 2*a.cfg.LeaseTTL), t, "a to stop holding the lapsed lease", func() bool { return !a.Holds(it) })
	var live int
	if err := a.pool.QueryRow(ctx, "SELECT count(*) FROM cluster_leases WHERE expires_at > now()").Scan(&live); err != nil || live != 0 {
		t.Fatalf("%d live leases after the lapse (a heartbeat revived it?), %v", live, err)
	}
	got, err := b.Claim(ctx)
	if err != nil || got == nil || got.ID != it.ID {
		t.Fatalf("b's claim of the lapsed item: %+v %v", got, err)
	}
	time.Sleep(2 * a.cfg.Heartbeat)
	if a.Holds(it) || !b.Holds(got) {
		t.Fatalf("after b's claim: a holds %v, b holds %v", a.Holds(it), b.Holds(got))
	}
	if err := a.Done(ctx, it); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's late Done: %v", err)
	}
	a.Drop(it)
	if err := b.Done(ctx, got); err != nil {
		t.Fatal(err)
	}
}
