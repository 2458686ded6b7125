package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// The cluster end to end (issue 19): three real `hermes gateway run`
// processes on one PostgreSQL database, Telegram's webhook (the fake) behind
// a round-robin proxy, the fake model. Every update must be answered exactly
// once while one process is killed mid-turn and the database restarts.

// rrProxy is a load balancer in front of the gateways' webhooks: requests go
// round-robin; a refused or failed one is retried on the next gateway (as a
// balancer with health checks does), and every dupEvery-th update is sent a
// second time to another gateway (a balancer's retry after a lost answer).
type rrProxy struct {
	backends []string
	next     atomic.Int64
	seen     atomic.Int64
	dups     atomic.Int64
	dupEvery int64
	client   *http.Client
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := p.seen.Add(1)
	post := func(i int64) int {
		req, _ := http.NewRequest(http.MethodPost, p.backends[i%int64(len(p.backends))]+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := p.client.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	i := p.next.Add(1)
	status := 0
	// Telegram's own client gives up after 10 s: stay well inside it.
	for deadline := time.Now().Add(8 * time.Second); ; i++ {
		if status = post(i); status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status == http.StatusOK && p.dupEvery > 0 && n%p.dupEvery == 0 {
		if post(i+1) == http.StatusOK {
			p.dups.Add(1)
		}
	}
	if status == 0 {
		status = http.StatusBadGateway
	}
	w.WriteHeader(status)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type clusterGateway struct {
	home   string
	admin  string
	cmd    *exec.Cmd
	done   chan error
	exited chan struct{}
	log    *syncWriter
}

// gwCluster is a running cluster of gateways and what they talk to.
type gwCluster struct {
	pg    *pgtest.Cluster
	dbURL string
	tg    *telegramfake.Server
	model *llmtest.Server
	proxy *rrProxy
	bin   string
	gws   []*clusterGateway
}

// startGatewayCluster starts procs `hermes gateway run` processes on one
// fresh database, webhook mode behind the proxy, and waits until each is
// ready (/readyz).
func startGatewayCluster(tb testing.TB, procs, replies int, dupEvery int64) *gwCluster {
	tb.Helper()
	return startGatewayClusterWith(tb, procs, replies, dupEvery, clusterWiring{})
}

// clusterWiring puts something between a gateway and what it talks to: the
// URL gateway i is given for the database (dbURL) and for the Bot API
// (botURL), nil for the real one.
type clusterWiring struct {
	dbURL  func(i int, url string) string
	botURL func(i int, url string) string
	// reply is the model's answer (default "ok" at once), served replies times.
	reply *llmtest.Reply
}

// startGatewayClusterWith is startGatewayCluster with the gateways wired as w says.
func startGatewayClusterWith(tb testing.TB, procs, replies int, dupEvery int64, w clusterWiring) *gwCluster {
	tb.Helper()
	if _, err := pgtest.Binaries(); err != nil && os.Getenv("CI") != "true" {
		tb.Skipf("no PostgreSQL server binaries: %v", err)
	}
	c := &gwCluster{pg: pgtest.Start(tb)}
	c.dbURL = c.pg.DB(tb)
	c.tg = telegramfake.Start("123:fake")
	tb.Cleanup(c.tg.Close)
	c.model = llmtest.NewServer(tb)
	c.model.Lean()
	reply := llmtest.Reply{Content: "ok"}
	if w.reply != nil {
		reply = *w.reply
	}
	reply.Repeat = replies
	c.model.Enqueue(reply)

	// The test binary is hermes when called by that name (TestMain).
	c.bin = filepath.Join(tb.TempDir(), "hermes")
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(self, c.bin); err != nil {
		tb.Fatal(err)
	}
	c.proxy = &rrProxy{dupEvery: dupEvery, client: &http.Client{Timeout: 5 * time.Second}}
	psrv := httptest.NewServer(c.proxy)
	tb.Cleanup(psrv.Close)

	c.gws = make([]*clusterGateway, procs)
	for i := range c.gws {
		home := tb.TempDir()
		hook, admin := freePort(tb), freePort(tb)
		dbURL, botURL := c.dbURL, c.tg.URL
		if w.dbURL != nil {
			dbURL = w.dbURL(i, dbURL)
		}
		if w.botURL != nil {
			botURL = w.botURL(i, botURL)
		}
		c.proxy.backends = append(c.proxy.backends, "http://127.0.0.1:"+strconv.Itoa(hook))
		cfg := fmt.Sprintf(`model:
  default: fake-model
  base_url: %s
platforms:
  telegram:
    extra:
      base_url: %s
gateway:
  store: %s
  admin_listen: 127.0.0.1:%d
  drain_timeout: 20
  max_concurrent_sessions: 16
  cluster: {lease_ttl: 3, poll: 1, retry_delay: 1}
`, c.model.URL, botURL, dbURL, admin)
		env := fmt.Sprintf("TELEGRAM_BOT_TOKEN=123:fake\nGATEWAY_ALLOW_ALL_USERS=true\nTELEGRAM_WEBHOOK_URL=%s/hook\nTELEGRAM_WEBHOOK_SECRET=s3cret-s3cret\nTELEGRAM_WEBHOOK_PORT=%d\n", psrv.URL, hook)
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".env"), []byte(env), 0o600); err != nil {
			tb.Fatal(err)
		}
		c.gws[i] = &clusterGateway{home: home, admin: "http://127.0.0.1:" + strconv.Itoa(admin)}
	}
	for _, g := range c.gws {
		g.cmd = exec.Command(c.bin, "gateway", "run")
		g.cmd.Env = c.environ(g.home)
		g.log = &syncWriter{}
		g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
		if err := g.cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		g.done = make(chan error, 1)
		g.exited = make(chan struct{})
		go func() { err := g.cmd.Wait(); close(g.exited); g.done <- err }()
	}
	tb.Cleanup(func() {
		for _, g := range c.gws {
			_ = g.cmd.Process.Kill()
			<-g.exited
		}
		if tb.Failed() {
			for i, g := range c.gws {
				b, _ := os.ReadFile(filepath.Join(g.home, "logs", "gateway.log"))
				tb.Logf("gateway %d output:\n%s\nlog (tail):\n%s", i, g.log.String(), tail(string(b), 4000))
			}
		}
	})
	waitFor(tb, 60*time.Second, "every gateway ready", func() bool {
		for _, g := range c.gws {
			if g.ready() != http.StatusOK {
				return false
			}
		}
		return true
	})
	return c
}

func (g *clusterGateway) ready() int {
	resp, err := http.Get(g.admin + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// environ is a gateway process's environment: its own HERMES_HOME (a
// machine of its own).
func (c *gwCluster) environ(home string) []string {
	env := []string{"HERMES_HOME=" + home, "HOME=" + home, "HERMES_OFFLINE=1", "PATH=" + os.Getenv("PATH")}
	for _, k := range []string{"PYENV_ROOT", "HERMES_PYTHON", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func TestGatewayClusterWebhook(t *testing.T) {
	chats, perChat := 300, 10
	if testing.Short() {
		chats = 60
	}
	c := startGatewayCluster(t, 3, 10*chats*perChat, 7)
	pg, dbURL, tg, proxy, bin, gws := c.pg, c.dbURL, c.tg, c.proxy, c.bin, c.gws
	environ := c.environ
	if resp, err := http.Get(gws[0].admin + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}

	// gateway status from one machine lists all three processes.
	st := exec.Command(bin, "gateway", "status", "--json")
	st.Env = environ(gws[0].home)
	out, err := st.Output()
	if err != nil {
		t.Fatalf("gateway status: %v\n%s", err, out)
	}
	var status struct {
		Cluster struct {
			Alive     int `json:"alive"`
			Processes []struct {
				PID int `json:"pid"`
			} `json:"processes"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatalf("gateway status --json: %v\n%s", err, out)
	}
	if status.Cluster.Alive != 3 {
		t.Fatalf("gateway status shows %d live processes, want 3:\n%s", status.Cluster.Alive, out)
	}
	pids := map[int]bool{}
	for _, p := range status.Cluster.Processes {
		pids[p.PID] = true
	}
	for i, g := range gws {
		if !pids[g.cmd.Process.Pid] {
			t.Fatalf("gateway status does not list gateway %d (pid %d):\n%s", i, g.cmd.Process.Pid, out)
		}
	}

	st = exec.Command(bin, "gateway", "status")
	st.Env = environ(gws[2].home)
	out, err = st.Output()
	if err != nil || !strings.Contains(string(out), "Cluster: 3 of 3 processes alive") || !strings.Contains(string(out), "Queue: 0 items") {
		t.Fatalf("gateway status: %v\n%s", err, out)
	}

	total := chats * perChat
	for j := range perChat {
		for c := range chats {
			tg.PushText(telegramfake.Message{ChatID: int64(10000 + c), UserID: int64(10000 + c), Text: fmt.Sprintf("c%d m%d", c, j)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	// Kill one process mid-turn: once a third is answered, and while it
	// holds a lease.
	if _, err := tg.WaitCalls(ctx, "sendMessage", total/3); err != nil {
		t.Fatalf("waiting for a third of the answers: %v", err)
	}
	victim := gws[1]
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	// Mid-turn: while the victim holds conversations' leases.
	held := 0
	waitFor(t, 30*time.Second, "the victim to hold a lease", func() bool {
		err := conn.QueryRow(ctx, `SELECT count(*) FROM cluster_leases l JOIN cluster_members m ON m.id = l.holder WHERE m.pid = $1`,
			victim.cmd.Process.Pid).Scan(&held)
		return err == nil && held > 0
	})
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	_ = conn.Close(ctx)
	// Restart the database under load.
	if _, err := tg.WaitCalls(ctx, "sendMessage", 2*total/3); err != nil {
		t.Fatalf("waiting for two thirds of the answers: %v", err)
	}
	if err := pg.Restart("immediate"); err != nil {
		t.Fatalf("restarting PostgreSQL: %v", err)
	}

	replies := func() (plain, recovered, other map[string]int) {
		plain, recovered, other = map[string]int{}, map[string]int{}, map[string]int{}
		for _, c := range tg.Calls("sendMessage") {
			if c.Status != http.StatusOK {
				continue
			}
			text := c.Params["text"]
			switch {
			case text == "ok":
				plain[c.Params["chat_id"]]++
			case strings.Contains(text, "Recovered reply"):
				recovered[c.Params["chat_id"]]++
			default:
				other[c.Params["chat_id"]+": "+text]++
			}
		}
		return
	}
	answered := waitUntil(120*time.Second, func() bool {
		plain, recovered, _ := replies()
		for c := range chats {
			id := strconv.Itoa(10000 + c)
			if plain[id]+recovered[id] < perChat {
				return false
			}
		}
		return true
	})
	plain, recovered, other := replies()
	if !answered {
		t.Errorf("timed out waiting for every update to be answered")
	}
	redelivered := 0
	for c := range chats {
		id := strconv.Itoa(10000 + c)
		if plain[id] != perChat && plain[id]+recovered[id] != perChat {
			t.Errorf("chat %s: %d answers and %d recovered, want %d in all", id, plain[id], recovered[id], perChat)
		}
		redelivered += recovered[id]
	}
	if len(other) > 0 {
		t.Errorf("answers that are not the model's: %v", other)
	}
	// The one allowed redelivery: at most the items the killed process (16
	// workers) had running.
	if redelivered > 16 {
		t.Errorf("%d answers sent again, more than the killed process had running", redelivered)
	}
	for i, st := range tg.WebhookPosts() {
		if st != http.StatusOK {
			t.Errorf("webhook post %d answered %d through the proxy", i, st)
		}
	}
	if proxy.dups.Load() == 0 {
		t.Errorf("the proxy sent no duplicate: the retry case was not tested")
	}

	conn, err = pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var queued, dead, seen int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM cluster_queue), (SELECT count(*) FROM cluster_dead), (SELECT count(*) FROM cluster_seen)`).Scan(&queued, &dead, &seen); err != nil {
		t.Fatal(err)
	}
	if queued != 0 || dead != 0 || seen != total {
		t.Errorf("queue %d, dead letters %d, seen %d: want 0, 0, %d", queued, dead, seen, total)
	}
	// Every message was stored in its conversation (at least once: a turn
	// cut by the kill runs again).
	var distinct int
	if err := conn.QueryRow(ctx, `SELECT count(DISTINCT content) FROM messages WHERE role = 'user'`).Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	if distinct != total {
		t.Errorf("%d distinct user messages stored, want %d", distinct, total)
	}
	t.Logf("%d updates, %d proxy duplicates, the victim killed holding %d leases, %d answers sent again after the kill", total, proxy.dups.Load(), held, redelivered)

	// SIGTERM drains: /readyz turns 503, the process exits 0.
	for i, g := range gws {
		if g == victim {
			continue
		}
		if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-g.done:
			if err != nil {
				t.Errorf("gateway %d after SIGTERM: %v", i, err)
			}
		case <-time.After(40 * time.Second):
			t.Errorf("gateway %d did not exit within 40s of SIGTERM", i)
		}
	}
}

func waitFor(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	if !waitUntil(d, ok) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

func waitUntil(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// syncWriter collects a process's output (written by exec's copiers, read
// by the test).
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
