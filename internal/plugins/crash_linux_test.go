package plugins

// A plugin whose process goes away by itself is started again, within a budget;
// past it the plugin is failed, and its fail-closed guard says which plugin it
// is and how to disable it. Real Python plugins that really exit.

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// crashyInit crashes on request. Marker files beside it change how it starts:
// once "crashed" exists (a crash was asked for), "crash-at-start" makes every
// later start exit in register() and "crash-after-start" makes it exit from a
// thread just after; "guard-crashes" makes its pre_tool_call guard exit on greet.
const crashyInit = `
import os, sys, threading

HERE = os.path.dirname(__file__)


def _has(name):
    return os.path.exists(os.path.join(HERE, name))


def _mark(name):
    open(os.path.join(HERE, name), "w").close()


def register(ctx):
    if _has("crashed") and _has("crash-at-start"):
        os._exit(5)
    if _has("crashed") and _has("crash-after-start"):
        threading.Timer(0.05, os._exit, (6,)).start()

    def ok(args, **kw):
        return "ok %d" % os.getpid()

    def exit_now(args, **kw):
        _mark("crashed")
        sys.stderr.write("crashy: the cache is corrupt, giving up\n")
        sys.stderr.flush()
        os._exit(7)

    def exit_later(args, **kw):
        _mark("crashed")
        threading.Timer(0.05, os._exit, (9,)).start()
        return "bye"

    def guard(tool_name, **kw):
        if tool_name == "greet" and _has("guard-crashes"):
            _mark("crashed")
            os._exit(7)

    for name, fn in [("ok", ok), ("exit_now", exit_now), ("exit_later", exit_later)]:
        ctx.register_tool(name="crashy_" + name, toolset="crashy", schema={}, handler=fn)
    ctx.register_hook("pre_tool_call", guard)
`

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newCrashEnv loads crashy and healthy with the restart policy given (no delays
// unless it says so) and the marker files named.
func newCrashEnv(t *testing.T, policy RestartPolicy, clock func() time.Time, markers ...string) *testEnv {
	t.Helper()
	e := prepareEnvWith(t, map[string]string{"crashy": crashyInit, "healthy": healthyInit}, "", func(o *Options) {
		o.Restart = policy
		o.Clock = clock
	})
	for _, m := range markers {
		mustWrite(t, filepath.Join(e.home.PluginsDir(), "crashy", m), "")
	}
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e
}

var noDelay = RestartPolicy{Tries: 3, Window: time.Minute}

// waitFor polls cond until it holds, bounded by the guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until key is in state want, and returns the state's detail.
func (e *testEnv) waitState(t *testing.T, key string, want LoadState) string {
	t.Helper()
	p, _ := e.m.Plugin(key)
	var detail string
	waitFor(t, "plugin "+key+" "+string(want), func() bool {
		var st LoadState
		st, detail = p.State()
		return st == want
	})
	return detail
}

// waitRestarted waits until key runs again in a process other than old.
func (e *testEnv) waitRestarted(t *testing.T, key string, old int) {
	t.Helper()
	p, _ := e.m.Plugin(key)
	waitFor(t, "plugin "+key+" restarted", func() bool {
		st, _ := p.State()
		proc := p.Process()
		return st == StateLoaded && proc != nil && proc.Pid() != old
	})
}

func TestCrashedPluginComesBack(t *testing.T) {
	cases := []struct {
		name   string
		crash  func(t *testing.T, e *testEnv, pid int)
		reason string
	}{
		{"os._exit in a tool call", func(t *testing.T, e *testEnv, _ int) {
			out := e.run(t, "crashy_exit_now", nil)
			wantAll(t, "error", out.ErrorMessage, "plugin crashy exited (exit status 7)", "the cache is corrupt")
		}, "exited (exit status 7)"},
		{"os._exit from a thread", func(t *testing.T, e *testEnv, _ int) {
			if out := e.run(t, "crashy_exit_later", nil); out.Status != "ok" || out.Result != "bye" {
				t.Fatalf("outcome %+v", out)
			}
		}, "exited (exit status 9)"},
		{"killed from outside", func(t *testing.T, _ *testEnv, pid int) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}, "exited (killed by signal killed)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCrashEnv(t, noDelay, nil)
			old := e.pid(t, "crashy")
			c.crash(t, e, old)
			waitGone(t, old, "the crashed process")
			e.waitRestarted(t, "crashy", old)
			out := e.run(t, "crashy_ok", nil)
			if out.Status != "ok" || out.Result == "ok "+strconv.Itoa(old) {
				t.Fatalf("after the restart crashy_ok gives %+v, want an answer from a new process", out)
			}
			p := e.plugin(t, "crashy")
			if n, last := p.Restarts(); n != 1 || last != c.reason {
				t.Errorf("Restarts() = %d, %q; want 1, %q", n, last, c.reason)
			}
			wantAll(t, "log", e.warns.String(),
				"plugin crashy: "+c.reason+"; restarting its process in 0s (restart 1 of 3 allowed within a minute)",
				"plugin crashy: restarted (pid "+strconv.Itoa(p.Process().Pid())+")")
			e.healthy(t)
		})
	}
}

func TestPluginThatKeepsCrashingFails(t *testing.T) {
	for _, c := range []struct{ marker, restartFailed string }{
		{"crash-at-start", "restart failed: plugin crashy exited (exit status 5)"},
		{"crash-after-start", ""},
	} {
		t.Run(c.marker, func(t *testing.T) {
			e := newCrashEnv(t, noDelay, nil, c.marker, "guard-crashes")
			// The guard exits on greet: the call is blocked, and from then on crashy
			// never stays up.
			if out := e.run(t, "greet", nil); out.Status != "blocked" {
				t.Fatalf("a crashing guard let the call through: %+v", out)
			}
			detail := e.waitState(t, "crashy", StateFailed)
			wantAll(t, "failure", detail, "hermes gave up restarting it after 3 restarts within a minute",
				"run `hermes plugins disable crashy` and restart hermes", "(last: ")
			p, _ := e.m.Plugin("crashy")
			if p.Process() != nil {
				t.Fatal("a failed plugin still has a process")
			}
			// Its guard stays in force and blocks every call, saying why and what to do.
			out := e.run(t, "greet", nil)
			if out.Status != "blocked" {
				t.Fatalf("with its guard's plugin down, greet ran: %+v", out)
			}
			wantAll(t, "block message", out.ErrorMessage, "plugin crashy is down", "hermes plugins disable crashy")
			if len(p.Snapshot().Hooks) != 1 {
				t.Fatalf("the failed plugin's guard was withdrawn: %+v", p.Snapshot().Hooks)
			}
			out = e.run(t, "crashy_ok", nil)
			wantAll(t, "tool error", out.ErrorMessage, "plugin crashy is down", "hermes plugins disable crashy")
			log := e.warns.String()
			if n := strings.Count(log, "restarting its process"); n != 3 {
				t.Errorf("%d restarts logged, want 3:\n%s", n, log)
			}
			wantAll(t, "log", log, "plugin crashy: failed: hermes gave up restarting it", c.restartFailed)
		})
	}
}

// The budget counts restarts within the window only: time that passes
// renews it (the clock is the test's, nothing sleeps a minute).
func TestRestartBudgetRenewsWithTime(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	e := newCrashEnv(t, RestartPolicy{Tries: 1, Window: time.Minute}, clock.Now)
	crash := func() int {
		old := e.pid(t, "crashy")
		e.run(t, "crashy_exit_now", nil)
		waitGone(t, old, "the crashed process")
		return old
	}
	e.waitRestarted(t, "crashy", crash())
	clock.advance(61 * time.Second)
	e.waitRestarted(t, "crashy", crash())
	p, _ := e.m.Plugin("crashy")
	if n, _ := p.Restarts(); n != 2 {
		t.Fatalf("%d restarts, want 2", n)
	}
	clock.advance(59 * time.Second) // the second restart is still within the minute
	crash()
	wantAll(t, "failure", e.waitState(t, "crashy", StateFailed), "after 1 restart within a minute")
}

// Close does not wait out a restart's back-off, and leaves nothing running.
func TestCloseDuringRestartBackoff(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newCrashEnv(t, RestartPolicy{Tries: 3, Window: time.Minute, Delay: time.Hour}, nil)
	old := e.pid(t, "crashy")
	e.run(t, "crashy_exit_now", nil)
	wantAll(t, "crash", e.waitState(t, "crashy", StateCrashed), "exited (exit status 7)")
	p, _ := e.m.Plugin("crashy")
	waitFor(t, "the restart to take the crashed process out", func() bool { return p.Process() == nil })
	out := e.run(t, "crashy_ok", nil)
	wantAll(t, "error while it restarts", out.ErrorMessage, "plugin crashy exited (exit status 7) and is being restarted")
	waitGone(t, old, "the crashed process")
	closeBounded(t, e.m)
}

func TestRestartPolicyNext(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p := RestartPolicy{Tries: 3, Window: time.Minute, Delay: 250 * time.Millisecond}
	cases := []struct {
		name   string
		recent []time.Time
		now    time.Time
		delay  time.Duration
		ok     bool
		kept   int
	}{
		{"first", nil, at(0), 250 * time.Millisecond, true, 1},
		{"second backs off", []time.Time{at(0)}, at(1), time.Second, true, 2},
		{"third backs off more", []time.Time{at(0), at(1)}, at(3), 4 * time.Second, true, 3},
		{"fourth within the minute", []time.Time{at(0), at(1), at(3)}, at(59), 0, false, 3},
		{"old restarts forgotten", []time.Time{at(0), at(1), at(3)}, at(64), 250 * time.Millisecond, true, 1},
		{"partly forgotten", []time.Time{at(0), at(30)}, at(61), time.Second, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kept, delay, ok := p.next(c.recent, c.now)
			if ok != c.ok || delay != c.delay || len(kept) != c.kept {
				t.Fatalf("next = %d kept, %s, %v; want %d, %s, %v", len(kept), delay, ok, c.kept, c.delay, c.ok)
			}
		})
	}
	if got := (RestartPolicy{}).orDefault(); got != DefaultRestartPolicy {
		t.Fatalf("zero policy = %+v, want the default", got)
	}
}
