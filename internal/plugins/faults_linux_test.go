package plugins

// Broken and hostile plugins seen through the manager, the way a user meets them:
// a tool call or hook fails with a message naming the plugin and the reason, the
// other plugins and the host carry on, and no process outlives its welcome.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/testutil/procs"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
	"github.com/hermes-go/hermes/internal/tools"
)

// guard bounds waits so a regression fails instead of hanging; nothing asserts on it.
const guard = 20 * time.Second

const faultyInit = `
import asyncio, os, signal, subprocess, sys, threading, time


def _spawn(args):
    env = dict(os.environ, HERMES_TEST_MARKER=args["marker"])
    return subprocess.Popen(["sleep", "1000"], env=env).pid


def ok(args, **kw):
    return "ok %d" % os.getpid()


def os_exit(args, **kw):
    sys.stderr.write("faulty: the cache file is corrupt, giving up\n")
    sys.stderr.flush()
    os._exit(7)


def segfault(args, **kw):
    sys.stderr.write("faulty: dereferencing a dangling pointer\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(60)


def sys_exit(args, **kw):
    sys.exit(3)


def spawn(args, **kw):
    return str(_spawn(args))


def hang(args, **kw):
    threading.Event().wait()


async def ahang(args, **kw):
    await asyncio.sleep(1e6)


def garbage(args, **kw):
    os.write(4, b"this is not json\n")
    threading.Event().wait()


def register(ctx):
    for name, fn in [("ok", ok), ("os_exit", os_exit), ("segfault", segfault), ("sys_exit", sys_exit),
                     ("spawn", spawn), ("hang", hang), ("ahang", ahang), ("garbage", garbage)]:
        ctx.register_tool(name="faulty_" + name, toolset="faulty", schema={}, handler=fn)
`

const healthyInit = `
import json, os


def register(ctx):
    def greet(args, **kw):
        return json.dumps({"greeting": "Hello, %s!" % args.get("name", "World"), "pid": os.getpid()})
    ctx.register_tool(name="greet", toolset="healthy", schema={}, handler=greet)
`

// hookyInit hangs in the hook named by the manifest's description.
const hookyInit = `
import threading


def register(ctx):
    def stuck(**kwargs):
        threading.Event().wait()
    ctx.register_hook(ctx.manifest.description, stuck)
`

type testEnv struct {
	m     *Manager
	home  home.Home
	sink  *lineLog
	warns *syncbuf.Buffer
}

type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) add(id, stream, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < 1000 {
		l.lines = append(l.lines, id+" "+stream+": "+line)
	}
}

// newTestEnv writes the plugins into a fresh HERMES_HOME, enables them, and loads.
func newTestEnv(t testing.TB, plugins map[string]string, extraConfig string) *testEnv {
	t.Helper()
	e := prepareEnv(t, plugins, extraConfig)
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// prepareEnv is newTestEnv without the Load.
func prepareEnv(t testing.TB, plugins map[string]string, extraConfig string) *testEnv {
	t.Helper()
	return prepareEnvWith(t, plugins, extraConfig, nil)
}

// prepareEnvWith is prepareEnv with the manager's options adjusted by tweak.
func prepareEnvWith(t testing.TB, plugins map[string]string, extraConfig string, tweak func(*Options)) *testEnv {
	t.Helper()
	h := home.Home{Dir: t.TempDir(), Profile: "custom"}
	var names []string
	for name, init := range plugins {
		desc := ""
		if i := strings.Index(name, ":"); i >= 0 { // "hooky:post_tool_call"
			name, desc = name[:i], name[i+1:]
		}
		names = append(names, name)
		dir := filepath.Join(h.PluginsDir(), name)
		mustWrite(t, filepath.Join(dir, "plugin.yaml"), fmt.Sprintf("name: %s\nversion: \"1.0\"\ndescription: %q\n", name, desc))
		mustWrite(t, filepath.Join(dir, "__init__.py"), init)
	}
	cfg := fmt.Sprintf("plugins:\n  enabled: [%s]\n  tool_call_timeout: 2\n  hook_callback_timeout: 2\n%s", strings.Join(names, ", "), extraConfig)
	mustWrite(t, h.ConfigPath(), cfg)
	env := &testEnv{home: h, sink: &lineLog{}, warns: &syncbuf.Buffer{}}
	opts := Options{
		Home: h,
		Env: func(k string) string {
			switch k {
			case "HERMES_BUNDLED_PLUGINS", "HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_PLUGINS_DEBUG":
				return ""
			}
			return os.Getenv(k)
		},
		Environ:     os.Environ,
		Cwd:         t.TempDir(),
		HostVersion: "0.0.0-test",
		Sink:        env.sink.add,
		Logger:      slog.New(slog.NewTextHandler(env.warns, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if tweak != nil {
		tweak(&opts)
	}
	env.m = New(opts)
	if err := env.m.Discover(); err != nil {
		t.Fatal(err)
	}
	if _, err := env.m.py.Info(context.Background()); err != nil {
		t.Skipf("no python: %v", err)
	}
	t.Cleanup(func() { closeBounded(t, env.m) })
	return env
}

func closeBounded(t testing.TB, m *Manager) {
	done := make(chan struct{})
	go func() { m.Close(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Errorf("Manager.Close did not return")
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *testEnv) plugin(t *testing.T, key string) *Plugin {
	t.Helper()
	p, ok := e.m.Plugin(key)
	if !ok {
		t.Fatalf("no plugin %s", key)
	}
	if msg := p.ErrorText(); msg != "" {
		t.Fatalf("plugin %s failed to load: %s", key, msg)
	}
	return p
}

func (e *testEnv) pid(t *testing.T, key string) int {
	t.Helper()
	proc := e.plugin(t, key).Process()
	if proc == nil {
		t.Fatalf("plugin %s has no process", key)
	}
	return proc.Pid()
}

// run calls a tool through the whole pipeline, bounded by the guard.
func (e *testEnv) run(t *testing.T, name string, args map[string]any) tools.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	out := e.m.pipeline().Run(ctx, tools.Call{Name: name, Args: args, ToolCallID: "call-" + name})
	if ctx.Err() != nil {
		t.Fatalf("tool %s: guard timeout; outcome %+v", name, out)
	}
	return out
}

func (e *testEnv) healthy(t *testing.T) {
	t.Helper()
	out := e.run(t, "greet", map[string]any{"name": "Ada"})
	if out.Status != "ok" || !strings.Contains(out.Result, "Hello, Ada!") {
		t.Fatalf("the healthy plugin is affected: %+v", out)
	}
}

// waitRestart waits for the restart that replaced the process old. The restart was
// registered (under m.mu) before old was killed; taking m.mu after old is gone
// orders this Wait after that Add.
func (e *testEnv) waitRestart(t *testing.T, key string, old int) {
	t.Helper()
	waitGone(t, old, "the old process of "+key)
	e.m.mu.Lock()
	e.m.mu.Unlock() //nolint:staticcheck // an empty critical section: see above
	e.m.WaitRestarts(guard)
	if e.pid(t, key) == old {
		t.Fatalf("plugin %s was not restarted", key)
	}
}

func newMarker() string { return procs.NewMarker() }

func alive(pid int) bool { return procs.Alive(pid) }

func waitGone(t *testing.T, pid int, what string) { procs.WaitGone(t, pid, what, guard) }

func markedProcs(marker string) []int { return procs.Marked(marker) }

func wantAll(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s %q does not mention %q", what, got, w)
		}
	}
}

// ---- 1. a plugin exits in the middle of a tool call ----------------------------

func TestToolCallWhenPluginExits(t *testing.T) {
	cases := []struct{ tool, reason, stderr string }{
		{"faulty_os_exit", "plugin faulty exited (exit status 7)", "the cache file is corrupt"},
		{"faulty_segfault", "plugin faulty exited (killed by signal segmentation fault)", "dangling pointer"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			e := newTestEnv(t, map[string]string{"faulty": faultyInit, "healthy": healthyInit}, "")
			out := e.run(t, c.tool, nil)
			if out.Status != "error" {
				t.Fatalf("status %q, want error: %+v", out.Status, out)
			}
			wantAll(t, "error", out.ErrorMessage, c.reason, c.stderr)
			wantAll(t, "result for the model", out.Result, c.reason)
			e.healthy(t)
		})
	}
	t.Run("faulty_sys_exit", func(t *testing.T) {
		e := newTestEnv(t, map[string]string{"faulty": faultyInit}, "")
		pid := e.pid(t, "faulty")
		out := e.run(t, "faulty_sys_exit", nil)
		wantAll(t, "error", out.ErrorMessage, "sys.exit(3)")
		if out := e.run(t, "faulty_ok", nil); out.Status != "ok" || out.Result != "ok "+strconv.Itoa(pid) {
			t.Fatalf("after sys.exit the same process should still answer: %+v", out)
		}
	})
}

// ---- 2. a tool handler hangs --------------------------------------------------------

func TestHungToolCallIsKilledAndRestarted(t *testing.T) {
	// These timeouts are meant: keep them out of the suite's stall reports, which
	// scripts/test.sh prints only to explain an unexpected failure.
	t.Setenv("HERMES_DEBUG_STALL", "")
	for _, tool := range []string{"faulty_hang", "faulty_ahang"} {
		t.Run(tool, func(t *testing.T) {
			e := newTestEnv(t, map[string]string{"faulty": faultyInit, "healthy": healthyInit}, "")
			old := e.pid(t, "faulty")
			marker := newMarker()
			spawned := e.run(t, "faulty_spawn", map[string]any{"marker": marker})
			gpid, err := strconv.Atoi(spawned.Result)
			if err != nil || !alive(gpid) {
				t.Fatalf("spawn: %+v", spawned)
			}
			out := e.run(t, tool, nil)
			if out.Status != "error" || out.ErrorType != "timeout" {
				t.Fatalf("outcome %+v, want a timeout error", out)
			}
			wantAll(t, "error", out.ErrorMessage, "timed out after 2s", "plugin faulty", "restarted", "plugins.tool_call_timeout")
			e.waitRestart(t, "faulty", old)
			waitGone(t, gpid, "the hung plugin's grandchild")
			if left := markedProcs(marker); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
			if out := e.run(t, "faulty_ok", nil); out.Status != "ok" {
				t.Fatalf("restarted plugin does not answer: %+v", out)
			}
			wantAll(t, "log", e.warns.String(), "plugin faulty: tool "+tool+" did not answer within 2s; restarting its process")
			e.healthy(t)
		})
	}
}

// ---- 3. a hook callback hangs ---------------------------------------------------

func TestHungHookCallback(t *testing.T) {
	t.Setenv("HERMES_DEBUG_STALL", "") // meant timeouts: no stall reports
	t.Run("post_tool_call fails open", func(t *testing.T) {
		e := newTestEnv(t, map[string]string{"healthy": healthyInit, "hooky:post_tool_call": hookyInit}, "")
		old := e.pid(t, "hooky")
		out := e.run(t, "greet", map[string]any{"name": "Ada"})
		if out.Status != "ok" || !strings.Contains(out.Result, "Hello, Ada!") {
			t.Fatalf("the tool result was lost to a hung post_tool_call hook: %+v", out)
		}
		wantAll(t, "log", e.warns.String(), "Hook 'post_tool_call' callback", "timed out after 2s")
		e.waitRestart(t, "hooky", old)
	})
	t.Run("pre_tool_call fails closed", func(t *testing.T) {
		e := newTestEnv(t, map[string]string{"healthy": healthyInit, "hooky:pre_tool_call": hookyInit}, "")
		old := e.pid(t, "hooky")
		out := e.run(t, "greet", map[string]any{"name": "Ada"})
		if out.Status != "blocked" {
			t.Fatalf("a hung pre_tool_call guard let the call through: %+v", out)
		}
		wantAll(t, "block message", out.ErrorMessage, "pre_tool_call plugin callback timed out or is still running")
		e.waitRestart(t, "hooky", old)
	})
}

// guardInit blocks greet in pre_tool_call and hangs in post_tool_call: the
// post hook's timeout restarts the plugin, and the guard must hold throughout.
const guardInit = `
import os, threading, time


def register(ctx):
    if os.path.exists(os.path.join(os.path.dirname(__file__), "slow-restart")):
        time.sleep(1.5)  # holds the restart open while the test calls in
    def guard(tool_name, **kwargs):
        if tool_name == "greet":
            return {"action": "block", "message": "greet is not allowed"}

    def slow(**kwargs):
        threading.Event().wait()

    ctx.register_hook("pre_tool_call", guard)
    ctx.register_hook("post_tool_call", slow)
`

// A restart after a hook timeout keeps the plugin's registrations in place:
// its pre_tool_call guard blocks while the process restarts and after, and
// the timed-out callback stays suppressed (its registration is the same one).
func TestRestartAfterHookTimeoutKeepsTheGuard(t *testing.T) {
	t.Setenv("HERMES_DEBUG_STALL", "") // meant timeouts: no stall reports
	e := newTestEnv(t, map[string]string{"healthy": healthyInit, "guard": guardInit}, "")
	old := e.pid(t, "guard")
	mustWrite(t, filepath.Join(e.home.PluginsDir(), "guard", "slow-restart"), "")
	out := e.run(t, "greet", map[string]any{"name": "Ada"}) // post_tool_call times out: restart
	if out.Status != "blocked" || !strings.Contains(out.ErrorMessage, "greet is not allowed") {
		t.Fatalf("first call: %+v", out)
	}
	waitGone(t, old, "the timed-out process")
	out = e.run(t, "greet", map[string]any{"name": "Ada"}) // while the new process registers
	if out.Status != "blocked" {
		t.Fatalf("the guard let greet through while its plugin restarted: %+v", out)
	}
	e.waitRestart(t, "guard", old)
	out = e.run(t, "greet", map[string]any{"name": "Ada"})
	if out.Status != "blocked" || !strings.Contains(out.ErrorMessage, "greet is not allowed") {
		t.Fatalf("after the restart the guard does not answer: %+v", out)
	}
	if n := strings.Count(e.warns.String(), "restarting its process"); n != 1 {
		t.Errorf("%d restarts, want 1: the timed-out post_tool_call callback ran again within its suppression window\n%s", n, e.warns.String())
	}
	p := e.plugin(t, "guard")
	if hooks := len(p.Snapshot().Hooks); hooks != 2 {
		t.Fatalf("the restarted plugin holds %d hook registrations, want its 2", hooks)
	}
	wantAll(t, "log", e.warns.String(), "restarting its process",
		"Hook 'post_tool_call' callback", "skipped after previous timeout")
}

// ---- 5. protocol garbage -----------------------------------------------------------

func TestProtocolGarbageFailsOnlyThatPlugin(t *testing.T) {
	e := newTestEnv(t, map[string]string{"faulty": faultyInit, "healthy": healthyInit}, "")
	pid := e.pid(t, "faulty")
	out := e.run(t, "faulty_garbage", nil)
	if out.Status != "error" {
		t.Fatalf("outcome %+v", out)
	}
	wantAll(t, "error", out.ErrorMessage, "plugin faulty", "protocol error", "this is not json")
	waitGone(t, pid, "the plugin that broke the protocol")
	e.healthy(t)
	// hermes had to stop it, but did not mean it to go away: it is restarted, and
	// the log says why.
	e.waitRestarted(t, "faulty", pid)
	if out := e.run(t, "faulty_ok", nil); out.Status != "ok" {
		t.Fatalf("after the restart: %+v", out)
	}
	wantAll(t, "log", e.warns.String(), "plugin faulty: sent an invalid message (protocol error: ", "restarting its process in")
}

// ---- 6. register() never returns ----------------------------------------------------

// expiring is a context whose deadline passes when the test says so, so a test can
// exercise the register timeout exactly when the plugin is known to be stuck.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiring) Done() <-chan struct{} { return c.done }
func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
func (c *expiring) expire() { c.once.Do(func() { close(c.done) }) }

func TestRegisterNeverReturns(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "importing")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sleepy := fmt.Sprintf(`
import os, time
with open(%q, "w") as f:
    f.write("%%d\n" %% os.getpid())
time.sleep(1000)


def register(ctx):
    pass
`, fifo)
	ctx := newExpiring()
	pidc := make(chan int, 1)
	go func() {
		// Opening the FIFO waits for the plugin to open it: it is in its import.
		b, err := os.ReadFile(fifo)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			pid = -1
		}
		pidc <- pid
		ctx.expire()
	}()
	e := prepareEnv(t, map[string]string{"sleepy": sleepy}, "")
	loaded := make(chan error, 1)
	go func() { loaded <- e.m.Load(ctx, nil) }()
	select {
	case err := <-loaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(guard):
		ctx.expire()
		t.Fatal("Load did not return")
	}
	pid := <-pidc
	if pid <= 0 {
		t.Fatal("the plugin never reported its import")
	}
	p, _ := e.m.Plugin("sleepy")
	wantAll(t, "load error", p.ErrorText(), "register() did not finish", "stopped")
	if p.Process() != nil || alive(pid) {
		t.Fatal("the stuck plugin is still running")
	}
}

// ---- 7. nothing survives Close -------------------------------------------------------

func TestCloseLeavesNoProcessBehind(t *testing.T) {
	e := newTestEnv(t, map[string]string{"faulty": faultyInit, "healthy": healthyInit}, "")
	marker := newMarker()
	out := e.run(t, "faulty_spawn", map[string]any{"marker": marker})
	gpid, err := strconv.Atoi(out.Result)
	if err != nil || !alive(gpid) {
		t.Fatalf("spawn: %+v", out)
	}
	pids := []int{e.pid(t, "faulty"), e.pid(t, "healthy"), gpid}
	closeBounded(t, e.m)
	for _, pid := range pids {
		waitGone(t, pid, "a plugin process after Close")
	}
	if left := markedProcs(marker); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A restart that races Close must not leak the process it replaces.
func TestRestartDuringCloseStopsTheOldProcess(t *testing.T) {
	e := newTestEnv(t, map[string]string{"faulty": faultyInit}, "")
	p := e.plugin(t, "faulty")
	proc := p.Process()
	e.m.mu.Lock()
	e.m.closed = true // Close has begun and may already have collected the processes
	e.m.mu.Unlock()
	e.m.restartAsync(p, "a tool timed out")
	select {
	case <-proc.Exited():
	case <-time.After(guard):
		proc.Kill()
		t.Fatal("the process being replaced was left running")
	}
	if alive(proc.Pid()) {
		t.Fatal("the process being replaced is still alive")
	}
	// Let the cleanup's Close run for real (it stops the fork server too).
	e.m.mu.Lock()
	e.m.closed = false
	e.m.mu.Unlock()
}

// With HERMES_DEBUG_STALL, a tool call that times out leaves a report: the
// connection's state, hermes' goroutines and the Python plugin's threads, with the
// handler that hangs among them.
func TestStallReportOnToolTimeout(t *testing.T) {
	t.Setenv("HERMES_DEBUG_STALL", "1")
	e := prepareEnv(t, map[string]string{"faulty": faultyInit}, "")
	report := &syncbuf.Buffer{}
	e.m.stall.Out = report
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	old := e.pid(t, "faulty")
	if out := e.run(t, "faulty_hang", nil); out.ErrorType != "timeout" {
		t.Fatalf("outcome %+v, want a timeout error", out)
	}
	wantAll(t, "stall report", report.String(),
		"hermes: stall report: tool faulty_hang of plugin faulty got no answer",
		"connection while the call waited: read token free=", "calls waiting=1", "pending ids=[",
		"connection now: ", "--- hermes goroutines ---", "--- plugin threads (pid ", "in hang")
	e.waitRestart(t, "faulty", old)
}

// A hook callback that outlives hook_callback_timeout leaves a stall report too.
func TestStallReportOnHookTimeout(t *testing.T) {
	t.Setenv("HERMES_DEBUG_STALL", "1")
	e := prepareEnv(t, map[string]string{"healthy": healthyInit, "hooky:post_tool_call": hookyInit}, "")
	report := &syncbuf.Buffer{}
	e.m.stall.Out = report
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	old := e.pid(t, "hooky")
	if out := e.run(t, "greet", map[string]any{"name": "Ada"}); out.Status != "ok" {
		t.Fatalf("outcome %+v", out)
	}
	wantAll(t, "stall report", report.String(),
		"hermes: stall report: post_tool_call hook of plugin hooky got no answer",
		"connection while the call waited: read token free=", "pending ids=[",
		"--- hermes goroutines ---", "--- plugin threads (pid ", "in stuck")
	e.waitRestart(t, "hooky", old)
}
