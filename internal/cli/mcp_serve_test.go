package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/testutil/procs"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// The plugin of the `hermes mcp serve` tests: a tool, a tool whose description
// tries to steer a terminal, a tool of a toolset the tests leave out, and a
// pre_tool_call guard that logs every call it sees (built-in ones too), blocks
// one text and asks approval for another.
const mcpPluginYAML = "name: mcpdemo\n"

const mcpPluginPy = `import json, os

print("mcpdemo: this print must not reach the protocol on stdout")

def register(ctx):
    home = os.environ["HERMES_HOME"]

    def shout(args, **kwargs):
        return json.dumps({"text": args["text"].upper(), "pid": os.getpid()})

    ctx.register_tool(name="shout", toolset="demo", handler=shout, schema={
        "name": "shout", "description": "upper-cases text",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    })
    ctx.register_tool(name="sneaky", toolset="demo", handler=shout, schema={
        "name": "sneaky", "description": "harmless\x1b]0;owned\x07\x1b[2J\x9b31m tool",
        "parameters": {"type": "object", "properties": {}},
    })
    ctx.register_tool(name="elsewhere", toolset="other", handler=shout, schema={
        "name": "elsewhere", "description": "not in the chosen toolsets",
        "parameters": {"type": "object", "properties": {}},
    })

    def guard(tool_name, args, **kwargs):
        with open(os.path.join(home, "hook.log"), "a") as f:
            f.write("pre_tool_call %s %s\n" % (tool_name, kwargs.get("task_id")))
        if args.get("text") == "forbidden":
            return {"action": "block", "message": "guard: forbidden text"}
        if args.get("text") == "ask-me":
            return {"action": "approve", "message": "a human must look"}

    ctx.register_hook("pre_tool_call", guard)
`

// mcpHome is a HERMES_HOME with the plugin enabled, and a work directory.
type mcpHome struct {
	dir, home, work string
	marker          string // in hermes' environment, so every process it starts carries it
}

func newMCPHome(t testing.TB) *mcpHome {
	t.Helper()
	dir := t.TempDir()
	h := &mcpHome{dir: dir, home: filepath.Join(dir, ".hermes"), work: filepath.Join(dir, "work"), marker: procs.NewMarker()}
	files := map[string]string{
		filepath.Join(h.home, "config.yaml"):                       "plugins:\n  enabled: [mcpdemo]\n",
		filepath.Join(h.home, "plugins", "mcpdemo", "plugin.yaml"): mcpPluginYAML,
		filepath.Join(h.home, "plugins", "mcpdemo", "__init__.py"): mcpPluginPy,
		filepath.Join(h.work, "notes.txt"):                         "first line\nsecond line\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// command is `hermes mcp serve args...` in h; hermes is this test binary
// (testscript.Main put it on PATH under that name).
func (h *mcpHome) command(t testing.TB, stderr *syncbuf.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("hermes")
	if err != nil {
		t.Fatalf("hermes is not on PATH: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"mcp", "serve"}, args...)...)
	cmd.Dir = h.work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "HERMES_HOME=" + h.home,
		"HERMES_OFFLINE=1", "HERMES_TEST_MARKER=" + h.marker}
	for _, k := range []string{"PYENV_ROOT", "HERMES_PYTHON", "PYENV_VERSION"} {
		if v := os.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if os.Getenv("PYENV_ROOT") == "" {
		if real, err := os.UserHomeDir(); err == nil {
			cmd.Env = append(cmd.Env, "PYENV_ROOT="+filepath.Join(real, ".pyenv"))
		}
	}
	cmd.Stderr = stderr
	return cmd
}

// connect starts cmd as an MCP server and connects the SDK's client to it.
func connectMCP(t testing.TB, cmd *exec.Cmd, stderr *syncbuf.Buffer) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A long grace: an exit on stdin EOF must not be SIGTERM's doing.
	tr := &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hermes-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to hermes mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v, want a tool result", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("tools/call %s: %d content items, want 1", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestMCPServeEndToEnd(t *testing.T) {
	h := newMCPHome(t)
	var stderr syncbuf.Buffer
	cmd := h.command(t, &stderr, "--toolsets", "demo,file,terminal")
	cs := connectMCP(t, cmd, &stderr)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
	}
	offered := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		offered[tl.Name] = tl
	}
	for _, name := range []string{"shout", "sneaky", "read_file", "write_file", "patch", "search_files", "terminal"} {
		if offered[name] == nil {
			t.Errorf("tool %s not offered; offered: %v", name, slices.Sorted(mapKeys(offered)))
		}
	}
	if offered["elsewhere"] != nil {
		t.Error("tool elsewhere (toolset other) is offered, but --toolsets leaves it out")
	}
	if s := offered["shout"]; s != nil {
		b, _ := json.Marshal(s.InputSchema)
		if want := `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`; string(b) != want {
			t.Errorf("shout inputSchema = %s, want %s", b, want)
		}
	}
	if s := offered["sneaky"]; s != nil {
		if strings.ContainsAny(s.Description, "\x1b\x07\u009b") || !strings.Contains(s.Description, `\x1b]0;owned\x07`) {
			t.Errorf("sneaky's description = %q, want its escape sequences shown escaped", s.Description)
		}
	}

	t.Run("plugin tool", func(t *testing.T) {
		text, isErr := callText(t, cs, "shout", map[string]any{"text": "hello"})
		if isErr || !strings.Contains(text, `"text": "HELLO"`) {
			t.Fatalf("shout = %s (isError %v)", text, isErr)
		}
		var res struct{ Pid int }
		if err := json.Unmarshal([]byte(text), &res); err != nil || res.Pid == 0 {
			t.Fatalf("no pid in %s: %v", text, err)
		}
		if !slices.Contains(procs.Marked(h.marker), res.Pid) {
			t.Errorf("the plugin's process %d does not carry the marker: the leftover check below would prove nothing", res.Pid)
		}
	})
	t.Run("hook blocks", func(t *testing.T) {
		text, isErr := callText(t, cs, "shout", map[string]any{"text": "forbidden"})
		if !isErr || !strings.Contains(text, "guard: forbidden text") {
			t.Errorf("blocked call = %s (isError %v), want the guard's message as a tool error", text, isErr)
		}
	})
	t.Run("built-in tool", func(t *testing.T) {
		text, isErr := callText(t, cs, "read_file", map[string]any{"path": "notes.txt"})
		if isErr || !strings.Contains(text, "second line") {
			t.Errorf("read_file = %s (isError %v)", text, isErr)
		}
	})
	t.Run("schema error", func(t *testing.T) {
		text, isErr := callText(t, cs, "shout", map[string]any{"txt": "typo"})
		if !isErr || !strings.Contains(text, "Invalid arguments for shout") {
			t.Errorf("call without text = %s (isError %v), want the schema check's error", text, isErr)
		}
	})
	t.Run("plugin approval denied", func(t *testing.T) {
		text, isErr := callText(t, cs, "shout", map[string]any{"text": "ask-me"})
		if !isErr || !strings.Contains(text, "no one is here to approve it") {
			t.Errorf("approval-gated call = %s (isError %v), want it refused", text, isErr)
		}
	})
	t.Run("dangerous command denied", func(t *testing.T) {
		victim := filepath.Join(h.work, "victim")
		if err := os.Mkdir(victim, 0o755); err != nil {
			t.Fatal(err)
		}
		text, isErr := callText(t, cs, "terminal", map[string]any{"command": "rm -rf " + victim})
		if !strings.Contains(text, "BLOCKED") || !strings.Contains(text, "no one is here to approve it") {
			t.Errorf("rm -rf = %s (isError %v), want it refused for want of approval", text, isErr)
		}
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("the command ran: %v", err)
		}
	})

	// The guard saw every call that reached the hooks, built-in ones too.
	log, _ := os.ReadFile(filepath.Join(h.home, "hook.log"))
	for _, want := range []string{"pre_tool_call shout mcp", "pre_tool_call read_file mcp", "pre_tool_call terminal mcp"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("hook.log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(stderr.String(), "this print must not reach the protocol") {
		t.Errorf("the plugin's print is not on stderr:\n%s", stderr.String())
	}

	// stdin EOF: hermes exits by itself (0, not SIGTERM's 130) and leaves no process.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("hermes after stdin EOF: %v, want exit 0\nstderr:\n%s", cmd.ProcessState, stderr.String())
	}
	procs.NoneMarked(t, h.marker, 10*time.Second)
}

func mapKeys(m map[string]*mcp.Tool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// SIGTERM (what an MCP client sends when stdin alone did not end us) stops
// hermes and every plugin. -v logs each call on stderr.
func TestMCPServeSIGTERM(t *testing.T) {
	h := newMCPHome(t)
	var stderr syncbuf.Buffer
	cmd := h.command(t, &stderr, "-v")
	cs := connectMCP(t, cmd, &stderr)
	defer cs.Close()
	if text, isErr := callText(t, cs, "shout", map[string]any{"text": "up"}); isErr {
		t.Fatalf("shout: %s", text)
	}
	if len(procs.Marked(h.marker)) < 2 {
		t.Fatalf("want hermes and its plugin running, got %v", procs.Marked(h.marker))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	procs.WaitGone(t, cmd.Process.Pid, "hermes after SIGTERM", 20*time.Second)
	procs.NoneMarked(t, h.marker, 10*time.Second)
	if !strings.Contains(stderr.String(), "msg=tools/call tool=shout status=ok") {
		t.Errorf("-v logged no line for the call:\n%s", stderr.String())
	}
}

// --toolsets naming no toolset is hermes chat's usage error, on stderr, exit 2.
func TestMCPServeUnknownToolset(t *testing.T) {
	h := newMCPHome(t)
	var stderr syncbuf.Buffer
	cmd := h.command(t, &stderr, "--toolsets", "demo,nope")
	// stdin stays open: hermes must end by itself when it cannot serve.
	// (an *os.File, so Wait does not wait on a copy from it).
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd.Stdin = in
	var stdout syncbuf.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	go func() {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	}()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit = %v, want 2\nstderr:\n%s", err, stderr.String())
	}
	if want := `--toolsets names "nope", which no tool belongs to; the toolsets are: demo, file, memory, other, skills, terminal (or all)`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	// stdout stays protocol only: every line is a JSON-RPC message.
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m map[string]any
		if line != "" && (json.Unmarshal([]byte(line), &m) != nil || m["jsonrpc"] != "2.0") {
			t.Errorf("stdout line is not JSON-RPC: %q", line)
		}
	}
	procs.NoneMarked(t, h.marker, 10*time.Second)
}
