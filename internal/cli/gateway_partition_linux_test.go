package cli_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// A network partition between one real `hermes gateway run` process and
// PostgreSQL (issue 19, docs/SCALING.md): the process's database traffic
// goes through a loopback TCP proxy the test cuts mid-run, while the other
// two keep theirs.

// pgProxy is the network between one gateway and the database: TCP on a
// loopback port, forwarded to the server's Unix socket. cut drops every
// connection and refuses new ones (a partition the kernel reports);
// blackhole keeps the connections and accepts new ones but forwards nothing
// (a partition nobody reports: the process waits); restore lets traffic
// through again, a blackholed connection's held bytes going on late, as a
// healed network delivers them.
type pgProxy struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	gate  chan struct{} // closed while traffic flows
	down  bool
}

func newPGProxy(t testing.TB, target string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]bool{}, gate: make(chan struct{})}
	close(p.gate)
	go p.serve(ln)
	t.Cleanup(func() { p.restore(); p.cut() })
	return p
}

// url is dbURL (a pgtest URL: the socket's directory as host) through the proxy.
func (p *pgProxy) url(dbURL string) string {
	u, _ := url.Parse(dbURL)
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", p.addr, strings.TrimPrefix(u.Path, "/"))
}

// socketOf is the server's socket for a pgtest URL (the default port).
func socketOf(dbURL string) string {
	u, _ := url.Parse(dbURL)
	return filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432")
}

func (p *pgProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *pgProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *pgProxy) wait() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	<-g
}

func (p *pgProxy) handle(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	p.wait()
	u, err := net.Dial("unix", p.target)
	if err != nil || !p.track(u) {
		c.Close()
		if u != nil {
			u.Close()
		}
		return
	}
	go p.pipe(u, c)
	p.pipe(c, u)
}

func (p *pgProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		p.wait()
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *pgProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

func (p *pgProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = make(chan struct{})
}

func (p *pgProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
	if !p.down {
		return
	}
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.ln, p.down = ln, false
			go p.serve(ln)
			return
		}
		if i == 50 {
			panic(fmt.Sprintf("pgProxy: listening on %s again: %v", p.addr, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// botTap stands between one gateway and the Bot API, noting when it asked
// to send a message: which process answered, and when.
type botTap struct {
	srv   *httptest.Server
	mu    sync.Mutex
	sends []time.Time
}

func newBotTap(t testing.TB, target string) *botTap {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	b := &botTap{}
	rp := httputil.NewSingleHostReverseProxy(u)
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sendMessage") {
			b.mu.Lock()
			b.sends = append(b.sends, time.Now())
			b.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// between counts the sends in [from, to).
func (b *botTap) between(from, to time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.sends {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

func TestGatewayClusterPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of real processes")
	}
	for _, mode := range []string{"cut", "blackhole"} {
		t.Run(mode, func(t *testing.T) { testPartition(t, mode) })
	}
}

func testPartition(t *testing.T, mode string) {
	const (
		ttl       = 3 * time.Second // the harness's gateway.cluster.lease_ttl
		partition = 4 * ttl
		chats     = 30
		perChat   = 8 // before the cut
		after     = 2 // more each, after the restore
	)
	var proxy *pgProxy
	taps := make([]*botTap, 3)
	c := startGatewayClusterWith(t, 3, 4*chats*(perChat+after), 0, clusterWiring{
		dbURL: func(i int, u string) string {
			if i != 0 {
				return u
			}
			proxy = newPGProxy(t, socketOf(u))
			return proxy.url(u)
		},
		botURL: func(i int, u string) string { taps[i] = newBotTap(t, u); return taps[i].srv.URL },
		// Turns long enough to be cut mid-way.
		reply: &llmtest.Reply{Content: "ok", Delay: llmtest.Duration(300 * time.Millisecond)},
	})
	victim := c.gws[0]
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	push := func(from, to int) {
		for j := from; j < to; j++ {
			for ch := range chats {
				c.tg.PushText(telegramfake.Message{ChatID: int64(20000 + ch), UserID: int64(20000 + ch), Text: fmt.Sprintf("c%d m%d", ch, j)})
			}
		}
	}
	push(0, perChat)
	if _, err := c.tg.WaitCalls(ctx, "sendMessage", chats*perChat/4); err != nil {
		t.Fatalf("waiting for a quarter of the answers: %v", err)
	}
	// Mid-turn: while the victim holds conversations' leases.
	var held []int64
	waitFor(t, 30*time.Second, "the victim to hold a lease", func() bool {
		rows, err := conn.Query(ctx, `SELECT l.item_id FROM cluster_leases l JOIN cluster_members m ON m.id = l.holder
			WHERE m.pid = $1 AND l.expires_at > now()`, victim.cmd.Process.Pid)
		if err != nil {
			return false
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		held = ids
		return err == nil && len(ids) > 0
	})
	cutAt := time.Now()
	if mode == "cut" {
		proxy.cut()
	} else {
		proxy.blackhole()
	}

	// The cut process says it is not ready within a lease expiry.
	waitFor(t, ttl+2*time.Second, "the cut process's /readyz to fail", func() bool { return victim.ready() != http.StatusOK })
	notReady := time.Since(cutAt)
	// The others take its conversations over: each item it held is
	// finished (or running) elsewhere while it is still cut off.
	waitFor(t, partition-ttl, "the cut process's items to be taken over", func() bool {
		var left int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM cluster_queue q LEFT JOIN cluster_members m ON m.id = q.claimed_by
			WHERE q.id = ANY($1) AND (m.pid IS NULL OR m.pid = $2)`, held, victim.cmd.Process.Pid).Scan(&left)
		return err == nil && left == 0
	})
	takenOver := time.Since(cutAt)
	time.Sleep(time.Until(cutAt.Add(partition)))
	restoreAt := time.Now()
	// Once its leases have lapsed (LeaseTTL after the last heartbeat it
	// sent, which is before the cut) it answers nothing.
	lapsed := cutAt.Add(ttl + 500*time.Millisecond)
	if n := taps[0].between(lapsed, restoreAt); n != 0 {
		t.Errorf("the cut process sent %d answers after its leases lapsed (%s after the cut) and before the restore", n, ttl)
	}
	inFlight := taps[0].between(cutAt, lapsed)
	othersDuring := taps[1].between(cutAt, restoreAt) + taps[2].between(cutAt, restoreAt)
	if othersDuring == 0 {
		t.Errorf("the other processes answered nothing while the victim was cut off")
	}
	proxy.restore()

	// It recovers: ready again, and it answers again.
	waitFor(t, 30*time.Second, "the restored process's /readyz", func() bool { return victim.ready() == http.StatusOK })
	recovered := time.Since(restoreAt)
	push(perChat, perChat+after)
	total := chats * (perChat + after)
	replies := func() (plain, again map[string]int, other []string) {
		plain, again = map[string]int{}, map[string]int{}
		for _, call := range c.tg.Calls("sendMessage") {
			if call.Status != http.StatusOK {
				continue
			}
			switch text := call.Params["text"]; {
			case text == "ok":
				plain[call.Params["chat_id"]]++
			case strings.Contains(text, "Recovered reply"):
				again[call.Params["chat_id"]]++
			default:
				other = append(other, call.Params["chat_id"]+": "+text)
			}
		}
		return
	}
	if !waitUntil(90*time.Second, func() bool {
		plain, again, _ := replies()
		for ch := range chats {
			id := strconv.Itoa(20000 + ch)
			if plain[id]+again[id] < perChat+after {
				return false
			}
		}
		return true
	}) {
		t.Errorf("timed out waiting for every update to be answered")
	}
	// Settle: a late answer of a duplicate would come now.
	time.Sleep(2 * time.Second)
	plain, again, other := replies()
	extra, extraPlain := 0, 0
	for ch := range chats {
		id := strconv.Itoa(20000 + ch)
		got := plain[id] + again[id]
		extraPlain += max(0, plain[id]-(perChat+after))
		switch {
		case got < perChat+after:
			t.Errorf("chat %s: %d answers, want %d: an update was lost", id, got, perChat+after)
		case got > perChat+after+1:
			t.Errorf("chat %s: %d answers, want %d (one more allowed: the turn cut mid-way)", id, got, perChat+after)
		}
		extra += got - (perChat + after)
	}
	// The one allowed duplicate, per item the cut process held: its answer
	// sent before its leases lapsed (even just before the cut, its Done then
	// cut off) and the next delivery's — the stored answer again, marked
	// recovered, or, for a send after the cut the ledger could not hear of,
	// a new one. A plain duplicate beyond those it sent after the cut is an
	// answer sent late, after the lease was gone.
	if extra > len(held) || extraPlain > inFlight {
		t.Errorf("%d answers beyond one per update (%d not marked recovered); the cut process held %d items and answered %d between the cut and the lapse", extra, extraPlain, len(held), inFlight)
	}
	if len(other) > 0 {
		t.Errorf("answers that are not the model's: %v", other)
	}
	if n := taps[0].between(restoreAt, time.Now()); n == 0 {
		t.Errorf("the restored process answered nothing after the restore")
	}

	var queued, dead, seen, users, sources int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM cluster_queue), (SELECT count(*) FROM cluster_dead), (SELECT count(*) FROM cluster_seen),
		(SELECT count(*) FROM messages WHERE role = 'user'), (SELECT count(DISTINCT source_id) FROM messages WHERE role = 'user')`).Scan(&queued, &dead, &seen, &users, &sources); err != nil {
		t.Fatal(err)
	}
	if queued != 0 || dead != 0 || seen != total {
		t.Errorf("queue %d, dead letters %d, seen %d: want 0, 0, %d", queued, dead, seen, total)
	}
	// Every update's message stored, each under its own update id; a turn cut
	// mid-way continued from its stored message rather than storing it again.
	if sources != total {
		t.Errorf("%d distinct updates among the stored user messages, want %d", sources, total)
	}
	if mode == "cut" && users != total {
		t.Errorf("%d user messages stored for %d updates: a resumed turn stored its message again", users, total)
	}
	if users < total || users > total+len(held) {
		t.Errorf("%d user messages stored for %d updates", users, total)
	}
	vlog, _ := os.ReadFile(filepath.Join(victim.home, "logs", "gateway.log"))
	lostLease := strings.Count(string(vlog), "no longer surely holds") + strings.Count(string(vlog), "lease was lost") + strings.Count(string(vlog), "came back too late")
	t.Logf("%s: victim held %d items at the cut, answered %d in the first lease expiry, /readyz failed after %s, its items taken over after %s, ready again %s after the restore; "+
		"others answered %d during the partition; %d answers beyond one per update (%d marked recovered); %d user messages for %d updates; %d lease-loss log lines",
		mode, len(held), inFlight, notReady.Round(100*time.Millisecond), takenOver.Round(100*time.Millisecond), recovered.Round(100*time.Millisecond),
		othersDuring, extra, sumValues(again), users, total, lostLease)
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
