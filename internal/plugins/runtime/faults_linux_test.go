package runtime

// Hostile and broken plugins: whatever a plugin process does, the host keeps
// running, the caller gets an error that names the plugin and the reason, and no
// process is left behind. Every plugin here is a real process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/pybridge"
	"github.com/hermes-go/hermes/internal/testutil/procs"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// guard bounds waits so a regression fails instead of hanging; nothing asserts on it.
const guard = 15 * time.Second

// faultyPlugin misbehaves on request, one tool per kind of failure.
const faultyPlugin = `
import asyncio, os, signal, subprocess, sys, threading, time


def _say(args):
    if args.get("stderr"):
        sys.stderr.write(args["stderr"] + "\n")
        sys.stderr.flush()


def ok(args, **kw):
    return "ok %d" % os.getpid()


def os_exit(args, **kw):
    _say(args)
    os._exit(int(args.get("code", 7)))


def sys_exit(args, **kw):
    sys.exit(int(args.get("code", 3)))


def segfault(args, **kw):
    _say(args)
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(60)


def spawn(args, **kw):
    env = dict(os.environ, HERMES_TEST_MARKER=args["marker"])
    return str(subprocess.Popen(["sleep", "1000"], env=env).pid)


def daemon(args, **kw):
    """A sleeper outside the plugin's process group: setsid, or a daemon's double fork."""
    env = dict(os.environ, HERMES_TEST_MARKER=args["marker"])
    if args["how"] == "setsid":
        return str(subprocess.Popen(["sleep", "1000"], env=env, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            pid = os.fork()
            if pid == 0:
                os.closerange(0, 256)
                os.execvpe("sleep", ["sleep", "1000"], env)
            os.write(w, str(pid).encode())
        finally:
            os._exit(0)
    os.close(w)
    pid = os.read(r, 32).decode()
    os.close(r)
    os.waitpid(child, 0)
    return pid


def daemon_and_exit(args, **kw):
    daemon(args)
    os._exit(5)


def spawn_and_exit(args, **kw):
    spawn(args)
    os._exit(5)


def hang(args, **kw):
    threading.Event().wait()


async def ahang(args, **kw):
    await asyncio.sleep(1e6)


def garbage(args, **kw):
    os.write(4, b"not json\n")
    threading.Event().wait()


def oversized(args, **kw):
    os.write(4, b'{"jsonrpc":"2.0","method":"log","params":{"message":"')
    chunk = b"x" * 65536
    while True:
        os.write(4, chunk)


def flood(args, **kw):
    def run():
        i = 0
        while True:
            i += 1
            print("flood line %d" % i)
    threading.Thread(target=run, daemon=True).start()
    return "flooding"


def giant(args, **kw):
    chunk = "y" * (1 << 20)
    for _ in range(int(args.get("mb", 100))):
        sys.stdout.write(chunk)
    sys.stdout.flush()
    return "written"


def say(args, **kw):
    print(args["text"])
    return "said"


def ask_host(args, **kw):
    return str(ctx_holder[0].has_plugin("anything"))


ctx_holder = []


def register(ctx):
    ctx_holder.append(ctx)
    for name, fn in list(globals().items()):
        if callable(fn) and not name.startswith("_") and name != "register" and getattr(fn, "__module__", None) == __name__:
            ctx.register_tool(name=name, toolset="faulty", schema={}, handler=fn)
`

// execPlugin speaks the protocol badly, as told by argv[1].
const execPlugin = `
import json, os, sys, time
mode = sys.argv[1]
if mode == "crash-at-start":
    sys.stderr.write("exec plugin: cannot find its config file\n")
    sys.exit(4)
if mode == "silent":
    time.sleep(1000)
r = os.fdopen(3, "rb")
w = os.fdopen(4, "wb", buffering=0)
def send(obj):
    w.write((json.dumps(obj) + "\n").encode())
for line in r:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocol_version": 1, "runtime": "test"}})
        if mode == "deaf":
            time.sleep(1000)  # never reads the protocol pipe again
        if mode == "hangup":
            w.close()  # closes its protocol pipe but keeps running
            time.sleep(1000)
    elif "id" in msg and "method" in msg:
        send({"jsonrpc": "2.0", "id": msg["id"], "result": "ok"})
`

// ---- helpers -------------------------------------------------------------------

var (
	pyOnce   sync.Once
	pyInterp string
	pyScript string
	pyErr    error
)

// python returns the interpreter and the unpacked bridge, shared by all tests.
func python(t *testing.T) (interp, script string) {
	t.Helper()
	pyOnce.Do(func() {
		info, err := ProbePython(context.Background(), nil, ChooseInterpreter("", os.Getenv), os.Getenv, testCache, testCache)
		if err != nil {
			pyErr = err
			return
		}
		pyInterp = info.Executable
		pyScript, pyErr = pybridge.Ensure(testCache)
	})
	if pyErr != nil {
		t.Skipf("no python: %v", pyErr)
	}
	return pyInterp, pyScript
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func newMarker(*testing.T) string { return procs.NewMarker() }

// faultHost is the host side for the tests: it records registrations and output.
type faultHost struct {
	mu      sync.Mutex
	tools   map[string]string
	streams map[string]int  // lines per "<plugin id>/<stream>"
	last    []string        // the last lines, "<id> <stream>: <line>"
	waiters []*lineWaiter   // tests waiting for a line
	panicOn map[string]bool // host methods that panic, to test host-side bugs
}

type lineWaiter struct {
	match func(id, stream, line string) bool
	ch    chan struct{}
}

func newFaultHost() *faultHost {
	return &faultHost{tools: map[string]string{}, streams: map[string]int{}, panicOn: map[string]bool{}}
}

func (h *faultHost) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	h.mu.Lock()
	panics := h.panicOn[method]
	h.mu.Unlock()
	if panics {
		panic("host bug while serving " + method)
	}
	switch method {
	case protocol.MethodRegisterTool:
		var p protocol.RegisterToolParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.tools[p.Name] = p.Handle
		h.mu.Unlock()
		return protocol.RegisterResult{Registered: true}, nil
	case protocol.MethodHasPlugin:
		return false, nil
	}
	return nil, nil
}

func (h *faultHost) sink(id, stream, line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams[id+"/"+stream]++
	if len(line) > 200 {
		line = line[:100] + "…" + line[len(line)-100:]
	}
	h.last = append(h.last, id+" "+stream+": "+line)
	if len(h.last) > 50 {
		h.last = h.last[len(h.last)-50:]
	}
	kept := h.waiters[:0]
	for _, w := range h.waiters {
		if w.match(id, stream, line) {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	h.waiters = kept
}

// waitLine returns a channel closed once a matching output line arrives.
func (h *faultHost) waitLine(match func(id, stream, line string) bool) <-chan struct{} {
	w := &lineWaiter{match: match, ch: make(chan struct{})}
	h.mu.Lock()
	h.waiters = append(h.waiters, w)
	h.mu.Unlock()
	return w.ch
}

func (h *faultHost) lines() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.last, "\n")
}

func (h *faultHost) handle1(t *testing.T, name string) string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	hd, ok := h.tools[name]
	if !ok {
		t.Fatalf("plugin registered no tool %q", name)
	}
	return hd
}

// testOptions keep the kill ladder short: these plugins ignore polite requests.
func testOptions(h *faultHost) Options {
	return Options{Sink: h.sink, StopGrace: 300 * time.Millisecond, HandshakeTimeout: guard, Reaper: testReaper}
}

// startFaulty starts the faulty Python plugin as id and runs its register().
func startFaulty(t *testing.T, id string, opts func(*Options)) (*Process, *faultHost) {
	t.Helper()
	interp, script := python(t)
	dir := filepath.Join(t.TempDir(), id)
	writeFile(t, filepath.Join(dir, "__init__.py"), faultyPlugin, 0o644)
	writeFile(t, filepath.Join(dir, "plugin.yaml"), "name: "+id+"\n", 0o644)
	h := newFaultHost()
	o := testOptions(h)
	if opts != nil {
		opts(&o)
	}
	rt := &Python{Interpreter: interp, Script: script, Options: o}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: id, Name: id, Dir: dir, Source: "user"}},
		Env: os.Environ(), WorkDir: t.TempDir()} // WorkDir: where a core dump would land
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, _, err := rt.Start(ctx, spec, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopBounded(t, p) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	return p, h
}

// stopBounded stops p and fails (rather than hangs) if Stop does not return.
func stopBounded(t *testing.T, p *Process) {
	t.Helper()
	done := make(chan struct{})
	go func() { p.Stop(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Errorf("Stop of plugin %s did not return; killing it", p.ID())
		p.Kill()
		<-done
	}
}

// callTool calls a tool with a guard timeout.
func callTool(p *Process, handle string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var out string
	err := p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handle, Args: args}, &out)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.New("guard timeout: the call neither answered nor failed")
	}
	return out, err
}

func alive(pid int) bool { return procs.Alive(pid) }

func waitGone(t *testing.T, pid int, what string) { procs.WaitGone(t, pid, what, guard) }

func markedProcs(marker string) []int { return procs.Marked(marker) }

func noMarkedProcs(t *testing.T, marker string) { procs.NoneMarked(t, marker, guard) }

func toolPid(t *testing.T, p *Process, h *faultHost) int {
	t.Helper()
	out, err := callTool(p, h.handle1(t, "ok"), nil)
	if err != nil {
		t.Fatalf("plugin %s does not answer: %v", p.ID(), err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(out, "ok "))
	if err != nil || pid != p.Pid() {
		t.Fatalf("ok tool answered %q (process pid %d)", out, p.Pid())
	}
	return pid
}

// ---- 1. the plugin exits in the middle of a call ------------------------------

func TestPluginExitMidCall(t *testing.T) {
	bystander, bh := startFaulty(t, "bystander", nil)
	cases := []struct {
		tool   string
		args   map[string]any
		reason string
	}{
		{"os_exit", map[string]any{"code": 7, "stderr": "faulty: giving up, state file is corrupt"}, "exit status 7"},
		{"segfault", map[string]any{"stderr": "faulty: about to crash"}, "killed by signal segmentation fault"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			p, h := startFaulty(t, "faulty", nil)
			_, err := callTool(p, h.handle1(t, c.tool), c.args)
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("got %v (%T), want an *ExitError", err, err)
			}
			msg := err.Error()
			for _, want := range []string{"plugin faulty", c.reason, c.args["stderr"].(string)} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
			select {
			case <-p.Exited():
			default:
				t.Error("the call failed before the process was seen to exit")
			}
			if got, want := p.EndReason(), "exited ("+c.reason+")"; got != want {
				t.Errorf("EndReason() = %q, want %q", got, want)
			}
			// Later calls fail at once with the same story.
			if _, err := callTool(p, h.handle1(t, "ok"), nil); err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("call after the exit: %v", err)
			}
			toolPid(t, bystander, bh) // other plugins are unaffected
		})
	}

	t.Run("sys_exit", func(t *testing.T) {
		// sys.exit in a handler is an exception like any other: the plugin lives on.
		p, h := startFaulty(t, "faulty", nil)
		_, err := callTool(p, h.handle1(t, "sys_exit"), map[string]any{"code": 3})
		var perr *protocol.Error
		if !errors.As(err, &perr) || !strings.Contains(perr.Message, "sys.exit(3)") {
			t.Fatalf("got %v, want a handler error naming sys.exit(3)", err)
		}
		toolPid(t, p, h)
	})
}

// ---- 4. output floods ----------------------------------------------------------

func TestOutputFloodKeepsCallsWorking(t *testing.T) {
	p, h := startFaulty(t, "flooder", nil)
	flooding := h.waitLine(func(id, stream, line string) bool { return strings.HasPrefix(line, "flood line 1000") })
	if out, err := callTool(p, h.handle1(t, "flood"), nil); err != nil || out != "flooding" {
		t.Fatalf("flood: %q %v", out, err)
	}
	select {
	case <-flooding:
	case <-time.After(guard):
		t.Fatalf("flood output not seen; last lines:\n%s", h.lines())
	}
	for i := 0; i < 20; i++ {
		toolPid(t, p, h) // the protocol pipe is not the output pipe
	}
	h.mu.Lock()
	n := h.streams["flooder/stdout"]
	for k := range h.streams {
		if !strings.HasPrefix(k, "flooder/") {
			t.Errorf("output tagged %q, want the plugin id", k)
		}
	}
	h.mu.Unlock()
	if n < 1000 {
		t.Fatalf("only %d stdout lines were delivered", n)
	}
	stopBounded(t, p)
	if alive(p.Pid()) {
		t.Fatal("flooding plugin still running after Stop")
	}
}

func TestGiantOutputLineIsCut(t *testing.T) {
	p, h := startFaulty(t, "giant", nil)
	var before goruntime.MemStats
	goruntime.ReadMemStats(&before)
	// 100 MB without a newline; the call returns once the host has read nearly all of it.
	if out, err := callTool(p, h.handle1(t, "giant"), map[string]any{"mb": 100}); err != nil || out != "written" {
		t.Fatalf("giant: %q %v", out, err)
	}
	cut := h.waitLine(func(id, stream, line string) bool {
		return id == "giant" && stream == "stdout" && strings.HasSuffix(line, "…[line cut]")
	})
	after := h.waitLine(func(id, stream, line string) bool { return line == "after the giant line" })
	if _, err := callTool(p, h.handle1(t, "say"), map[string]any{"text": "\nafter the giant line"}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan struct{}{cut, after} {
		select {
		case <-ch:
		case <-time.After(guard):
			t.Fatalf("expected output not seen; last lines:\n%s", h.lines())
		}
	}
	var end goruntime.MemStats
	goruntime.ReadMemStats(&end)
	// Reading 100 MB must not allocate anything near 100 MB: the line is cut at
	// maxOutputLine and the rest discarded as it streams by.
	if alloc := end.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Fatalf("host allocated %d MB while a plugin printed a 100 MB line", alloc>>20)
	}
	toolPid(t, p, h)
}

func TestLineCollectorBoundsOneLine(t *testing.T) {
	in := io.MultiReader(strings.NewReader("short\n"), io.LimitReader(endlessY{}, 10<<20), strings.NewReader("\ntail"))
	br := bufio.NewReaderSize(in, 4096)
	lc := lineCollector{max: 1000}
	var got []string
	for {
		chunk, err := br.ReadSlice('\n')
		if line, ok := lc.add(chunk, err == nil); ok {
			got = append(got, line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if line, ok := lc.flush(); ok {
				got = append(got, line)
			}
			break
		}
	}
	if len(got) != 3 || got[0] != "short" || got[2] != "tail" {
		t.Fatalf("lines: %d %q", len(got), got)
	}
	if want := strings.Repeat("y", 1000) + " …[line cut]"; got[1] != want {
		t.Fatalf("long line came out as %d bytes, want it cut to 1000 plus a marker", len(got[1]))
	}
}

type endlessY struct{}

func (endlessY) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}

// ---- 5. protocol violations ----------------------------------------------------

func TestProtocolViolationStopsOnlyThatPlugin(t *testing.T) {
	bystander, bh := startFaulty(t, "bystander", nil)
	for _, tool := range []string{"garbage", "oversized"} {
		t.Run(tool, func(t *testing.T) {
			p, h := startFaulty(t, "liar", func(o *Options) { o.MaxMessageBytes = 1 << 20 })
			pid := p.Pid()
			reported := h.waitLine(func(id, stream, line string) bool {
				return id == "liar" && strings.Contains(line, "protocol error")
			})
			_, err := callTool(p, h.handle1(t, tool), nil)
			if err == nil || !strings.Contains(err.Error(), "plugin liar") || !strings.Contains(err.Error(), "protocol error") {
				t.Fatalf("got %v, want an error naming plugin liar and the protocol error", err)
			}
			want := "malformed protocol message"
			if tool == "oversized" {
				want = protocol.ErrMessageTooLarge.Error()
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			select {
			case <-reported:
			case <-time.After(guard):
				t.Errorf("protocol error not reported in the plugin's log; last lines:\n%s", h.lines())
			}
			select {
			case <-p.Exited():
			case <-time.After(guard):
				t.Fatal("the plugin was not stopped")
			}
			// Why it ended is hermes' reason, not the SIGKILL that did it.
			if got := p.EndReason(); !strings.HasPrefix(got, "sent an invalid message (protocol error: ") || !strings.Contains(got, want) {
				t.Errorf("EndReason() = %q", got)
			}
			if alive(pid) {
				t.Fatal("plugin process still running")
			}
			toolPid(t, bystander, bh)
		})
	}
}

func TestHostHandlerPanicFailsOnlyThatCall(t *testing.T) {
	p, h := startFaulty(t, "asker", nil)
	h.mu.Lock()
	h.panicOn[protocol.MethodHasPlugin] = true
	h.mu.Unlock()
	_, err := callTool(p, h.handle1(t, "ask_host"), nil)
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("got %v, want the plugin to see the host handler's failure", err)
	}
	toolPid(t, p, h)
}

// ---- 6. handshake and register never finish ------------------------------------

func startExec(t *testing.T, id string, argv []string, marker string, opts Options) (*Process, error) {
	t.Helper()
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: id, Name: id, Dir: t.TempDir(), Source: "user"}},
		Command: argv, Env: append(os.Environ(), "HERMES_TEST_MARKER="+marker)}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, _, err := (&Exec{Options: opts}).Start(ctx, spec, newFaultHost().handle)
	if p != nil {
		t.Cleanup(func() { stopBounded(t, p) })
	}
	return p, err
}

func TestHandshakeNeverCompletes(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "silent.sh")
	writeFile(t, script, "#!/bin/sh\necho 'silent plugin: starting' >&2\nsleep 1000\n", 0o755)
	marker := newMarker(t)
	// A long StopGrace: a start that gives up on the handshake must not wait for a
	// polite exit from a process that never spoke (the guard below would expire).
	opts := Options{HandshakeTimeout: 300 * time.Millisecond, StopGrace: 2 * guard, Reaper: testReaper}
	type result struct {
		p   *Process
		err error
	}
	res := make(chan result, 1)
	go func() {
		p, err := startExec(t, "silent", []string{script}, marker, opts)
		res <- result{p, err}
	}()
	var r result
	select {
	case r = <-res:
	case <-time.After(guard):
		t.Fatal("start did not give up on a plugin that never answers the handshake")
	}
	p, err := r.p, r.err
	if err == nil {
		t.Fatalf("start succeeded for a plugin that never answers (pid %d)", p.Pid())
	}
	for _, want := range []string{"plugin silent", "handshake", "300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Start returned only after the process and the sleep it ran were gone.
	noMarkedProcs(t, marker)
}

func TestPluginExitsBeforeHandshake(t *testing.T) {
	interp, _ := python(t)
	script := filepath.Join(t.TempDir(), "plugin.py")
	writeFile(t, script, execPlugin, 0o644)
	_, err := startExec(t, "early", []string{interp, script, "crash-at-start"}, newMarker(t), Options{StopGrace: guard, Reaper: testReaper})
	if err == nil {
		t.Fatal("start succeeded for a plugin that exited")
	}
	for _, want := range []string{"plugin early", "exit status 4", "cannot find its config file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRegisterNeverAnswers(t *testing.T) {
	interp, script := python(t)
	dir := filepath.Join(t.TempDir(), "sleepy")
	writeFile(t, filepath.Join(dir, "__init__.py"), "import time\ntime.sleep(1000)\ndef register(ctx):\n    pass\n", 0o644)
	h := newFaultHost()
	rt := &Python{Interpreter: interp, Script: script, Options: Options{Sink: h.sink, StopGrace: guard, Reaper: testReaper}}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "sleepy", Name: "sleepy", Dir: dir, Source: "user"}}, Env: os.Environ()}
	p, _, err := rt.Start(context.Background(), spec, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("register: %v, want a timeout", err)
	}
	// The import is stuck in the main thread; Stop still ends the process, politely
	// (the bridge answers shutdown from another thread) well inside StopGrace.
	stopBounded(t, p)
	if alive(p.Pid()) {
		t.Fatal("plugin still running after Stop")
	}
}

// ---- a plugin that stops reading, or hangs up without exiting -----------------

func TestPluginThatStopsReadingCannotBlockTheHost(t *testing.T) {
	interp, _ := python(t)
	script := filepath.Join(t.TempDir(), "plugin.py")
	writeFile(t, script, execPlugin, 0o644)
	p, err := startExec(t, "deaf", []string{interp, script, "deaf"}, newMarker(t), Options{StopGrace: guard, Reaper: testReaper})
	if err != nil {
		t.Fatal(err)
	}
	// Far more than a pipe holds: the write blocks because nobody reads.
	big := map[string]any{"blob": strings.Repeat("z", 4<<20)}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- p.Call(ctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: "h1", Args: big}, nil)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the caller's deadline", err)
		}
		if !strings.Contains(err.Error(), "plugin deaf") || !strings.Contains(err.Error(), "stopped reading") {
			t.Errorf("error %q does not say the plugin stopped reading", err)
		}
	case <-time.After(guard):
		t.Fatal("a call to a plugin that does not read its input ignored its deadline")
	}
	select {
	case <-p.Exited():
	case <-time.After(guard):
		t.Fatal("a plugin that stopped reading its input was not stopped")
	}
	stopBounded(t, p)
}

func TestPluginThatHangsUpIsStopped(t *testing.T) {
	interp, _ := python(t)
	script := filepath.Join(t.TempDir(), "plugin.py")
	writeFile(t, script, execPlugin, 0o644)
	p, err := startExec(t, "hangup", []string{interp, script, "hangup"}, newMarker(t), Options{StopGrace: 200 * time.Millisecond, Reaper: testReaper})
	if err != nil {
		t.Fatal(err)
	}
	_, err = callTool(p, "h1", nil)
	if err == nil || !strings.Contains(err.Error(), "plugin hangup") || !strings.Contains(err.Error(), "closed its protocol connection") {
		t.Fatalf("got %v, want an error saying plugin hangup closed its protocol connection", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("the plugin process was not stopped")
	}
}

// ---- 7. descendants ------------------------------------------------------------

func TestNoDescendantSurvives(t *testing.T) {
	spawn := func(t *testing.T, p *Process, h *faultHost, marker string) int {
		t.Helper()
		out, err := callTool(p, h.handle1(t, "spawn"), map[string]any{"marker": marker})
		if err != nil {
			t.Fatal(err)
		}
		gpid, err := strconv.Atoi(out)
		if err != nil || !alive(gpid) {
			t.Fatalf("spawn answered %q", out)
		}
		return gpid
	}
	t.Run("after Stop", func(t *testing.T) {
		p, h := startFaulty(t, "parent", nil)
		marker := newMarker(t)
		gpid := spawn(t, p, h, marker)
		stopBounded(t, p)
		waitGone(t, gpid, "grandchild")
		noMarkedProcs(t, marker)
	})
	t.Run("after Kill", func(t *testing.T) {
		p, h := startFaulty(t, "parent", nil)
		marker := newMarker(t)
		gpid := spawn(t, p, h, marker)
		p.Kill()
		<-p.Exited()
		waitGone(t, gpid, "grandchild")
		noMarkedProcs(t, marker)
	})
	t.Run("after the plugin crashed", func(t *testing.T) {
		// Nobody stops a crashed plugin; its orphans must not outlive it.
		p, h := startFaulty(t, "parent", nil)
		marker := newMarker(t)
		_, err := callTool(p, h.handle1(t, "spawn_and_exit"), map[string]any{"marker": marker})
		if err == nil || !strings.Contains(err.Error(), "exit status 5") {
			t.Fatalf("got %v", err)
		}
		pids := markedProcs(marker)
		for _, pid := range pids {
			waitGone(t, pid, "orphaned grandchild")
		}
		noMarkedProcs(t, marker)
	})
}

// ---- 8. the host is SIGKILLed --------------------------------------------------

// TestHostKilledTakesPluginsDown: when hermes dies without cleaning up, the kernel
// kills the plugin (PR_SET_PDEATHSIG) and the bridge's group watchdog kills what the
// plugin spawned. (Exec plugins get the first but not the second: their children
// are theirs to clean up; see docs.)
func TestHostKilledTakesPluginsDown(t *testing.T) {
	for _, fork := range []bool{false, true} {
		t.Run(fmt.Sprintf("fork_server=%v", fork), func(t *testing.T) { hostKilled(t, fork) })
	}
}

func hostKilled(t *testing.T, fork bool) {
	marker := newMarker(t)
	host, _, pluginPid, grandchildPid := startMiniHost(t, miniHostConfig{Marker: marker, Fork: fork})
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	waitGone(t, pluginPid, "plugin of a killed host")
	waitGone(t, grandchildPid, "grandchild of a killed host")
	noMarkedProcs(t, marker)
}

// startMiniHost runs the test binary as a mini host (see miniHost) of the faulty
// plugin, which it has spawn a grandchild; it returns the host, its stdin (closing
// it makes the host exit) and the pids of the plugin and the grandchild.
func startMiniHost(t *testing.T, cfg miniHostConfig) (host *exec.Cmd, stdin io.WriteCloser, pluginPid, grandchildPid int) {
	t.Helper()
	interp, script := python(t)
	cfg.Interpreter, cfg.Script = interp, script
	cfg.PluginDir = filepath.Join(t.TempDir(), "orphan-maker")
	writeFile(t, filepath.Join(cfg.PluginDir, "__init__.py"), faultyPlugin, 0o644)
	raw, _ := json.Marshal(cfg)
	host = exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), miniHostEnv+"="+string(raw))
	var stderr bytes.Buffer
	host.Stderr = &stderr
	stdin, err := host.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Process.Kill()
		_ = host.Wait()
		if t.Failed() {
			t.Logf("mini host stderr:\n%s", stderr.String())
		}
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(guard):
		t.Fatalf("mini host did not start its plugin; stderr:\n%s", stderr.String())
	}
	if _, err := fmtSscan(line, &pluginPid, &grandchildPid); err != nil {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("mini host said %q: %v; stderr:\n%s", line, err, stderr.String())
	}
	return host, stdin, pluginPid, grandchildPid
}

func fmtSscan(line string, pluginPid, grandchildPid *int) (int, error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "READY" {
		return 0, errors.New("not a READY line")
	}
	var err1, err2 error
	*pluginPid, err1 = strconv.Atoi(f[1])
	*grandchildPid, err2 = strconv.Atoi(f[2])
	return 2, errors.Join(err1, err2)
}

// An async handler's sys.exit() escapes asyncio's task machinery and used to stop the
// bridge's event loop: that call and every later async call hung until their timeout.
func TestAsyncSysExitKeepsTheEventLoop(t *testing.T) {
	interp, script := python(t)
	dir := filepath.Join(t.TempDir(), "aexit")
	writeFile(t, filepath.Join(dir, "__init__.py"), `
import sys


async def aexit(args, **kw):
    sys.exit(3)


async def aok(args, **kw):
    return "aok"


def register(ctx):
    ctx.register_tool(name="aexit", toolset="t", schema={}, handler=aexit)
    ctx.register_tool(name="aok", toolset="t", schema={}, handler=aok)
`, 0o644)
	h := newFaultHost()
	rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h)}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "aexit", Name: "aexit", Dir: dir, Source: "user"}}, Env: os.Environ()}
	p, _, err := rt.Start(context.Background(), spec, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopBounded(t, p) })
	if err := p.Call(context.Background(), protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = callTool(p, h.handle1(t, "aexit"), nil)
	var perr *protocol.Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "sys.exit(3)") {
		t.Fatalf("got %v, want a handler error naming sys.exit(3)", err)
	}
	for i := 0; i < 3; i++ {
		if out, err := callTool(p, h.handle1(t, "aok"), nil); err != nil || out != "aok" {
			t.Fatalf("async call after sys.exit: %q %v", out, err)
		}
	}
}

// A request nested deeper than Python's JSON decoder goes fails that request; the
// plugin process stays and answers the next one (it exited with status 70 before,
// taking every hook of the plugin with it).
func TestDeeplyNestedRequestFailsOnlyItself(t *testing.T) {
	p, _ := startFaulty(t, "deep", nil)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	deep := `{"x":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}`
	err := p.Call(ctx, protocol.MethodPing, protocol.RawParams(deep), nil)
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("deep request: %v, want the bridge's nesting error", err)
	}
	var pong map[string]any
	if err := p.Call(ctx, protocol.MethodPing, struct{}{}, &pong); err != nil || pong["pong"] != true {
		t.Fatalf("ping after the deep request: %v %v", pong, err)
	}
}
