package plugins

// ctx.call_mcp seen through the manager, from real plugin processes: a Python
// plugin's sync tool, async tool, sync and async hooks, and a Go SDK plugin's
// tool and hook, against a real MCP server (the official SDK's, in memory).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/testutil/mcpmem"
	"github.com/hermes-go/hermes/internal/tools"
)

const mcpPlugin = `
import asyncio, json


def _call(ctx, args):
    try:
        env = ctx.call_mcp(args["server"], args.get("tool", "echo"), args.get("arguments"),
                           timeout=args.get("timeout", 30))
        return json.dumps(env, sort_keys=True)
    except PermissionError as exc:
        return json.dumps({"raised": type(exc).__name__, "message": str(exc)})


def register(ctx):
    ctx.register_tool(name="mcp_sync", toolset="mcpt", schema={}, handler=lambda args, **kw: _call(ctx, args))

    async def mcp_async(args, **kw):
        await asyncio.sleep(0)
        return _call(ctx, args)

    ctx.register_tool(name="mcp_async", toolset="mcpt", schema={}, handler=mcp_async, is_async=True)
    for name in ("probe", "probe_async", "go_probe"):
        ctx.register_tool(name=name, toolset="mcpt", schema={}, handler=lambda args, **kw: "not blocked")

    def hook(tool_name, **kw):
        if tool_name == "probe":
            return {"action": "block", "message": _call(ctx, {"server": "fs", "arguments": {"message": "from a hook"}})}

    async def ahook(tool_name, **kw):
        if tool_name == "probe_async":
            await asyncio.sleep(0)
            return {"action": "block", "message": _call(ctx, {"server": "fs", "arguments": {"message": "from an async hook"}})}

    ctx.register_hook("pre_tool_call", hook)
    ctx.register_hook("pre_tool_call", ahook)

    def mcp_loop(args, **kw):
        # BenchmarkCallMCP: n calls, each one ctx.call_mcp there and back.
        for _ in range(args["n"]):
            env = ctx.call_mcp("fs", "echo", {"message": "hi"})
        return json.dumps(env)

    ctx.register_tool(name="mcp_loop", toolset="mcpt", schema={}, handler=mcp_loop)
`

// mcpEnv loads the Python plugin "mcpt" (and with goPlugin the Go plugin
// "gomcp"), both allowed to call server fs, with mcp as the client.
func mcpEnv(t testing.TB, mcp hostapi.MCPCaller, goPlugin bool) *testEnv {
	t.Helper()
	plugins := map[string]string{"mcpt": mcpPlugin}
	var bin string
	if goPlugin {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("needs the go command to build the Go plugin")
		}
		bin = filepath.Join(t.TempDir(), "mcpcall")
		build := exec.Command("go", "build", "-o", bin, "../../pkg/pluginsdk/testdata/mcpcall")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		plugins["gomcp"] = "" // replaced by the Go plugin below
	}
	cfg := "  entries:\n    mcpt:\n      mcp_allowlist: [fs]\n    gomcp:\n      mcp_allowlist: [fs]\n"
	e := prepareEnvWith(t, plugins, cfg, func(o *Options) {
		o.MCP = mcp
		if goPlugin {
			dir := filepath.Join(o.Home.PluginsDir(), "gomcp")
			mustWrite(t, filepath.Join(dir, "plugin.yaml"), "name: gomcp\nruntime: exec\ncommand: ["+bin+"]\n")
			if err := os.Remove(filepath.Join(dir, "__init__.py")); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err := e.m.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// decode reads a tool result (or a block's message) as JSON.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %q", s)
	}
	return v
}

const deniedWeb = "Plugin '%s' is not allowed to call MCP server 'web'. Add it to plugins.entries.%s.mcp_allowlist in config.yaml to grant access (default is no MCP access)."

func TestCallMCPFromPythonPlugin(t *testing.T) {
	server := mcpmem.New(t, "fs", "web")
	e := mcpEnv(t, server, false)
	for _, tool := range []string{"mcp_sync", "mcp_async"} {
		t.Run(tool, func(t *testing.T) {
			out := e.run(t, tool, map[string]any{"server": "fs", "arguments": map[string]any{"message": "hi"}})
			if out.Status != "ok" || out.Result != `{"ok": true, "result": "Echo: hi"}` {
				t.Fatalf("echo: %+v", out)
			}
			// An approval the call needs (an untrusted server) is asked as the plugin's.
			if o := tools.OriginOf(server.LastContext()); o.Kind != tools.FromPlugin || o.Plugin != "mcpt" || o.String() != "plugin `mcpt` through ctx.call_mcp" {
				t.Fatalf("call origin %+v", o)
			}
			out = e.run(t, tool, map[string]any{"server": "fs", "tool": "add", "arguments": map[string]any{"a": 2, "b": 40}})
			if out.Result != `{"ok": true, "result": "42", "structuredContent": {"sum": 42}}` {
				t.Fatalf("add: %+v", out)
			}
			out = e.run(t, tool, map[string]any{"server": "fs", "tool": "fail", "arguments": map[string]any{"message": "disk full"}})
			if out.Result != `{"error": "disk full", "ok": false}` {
				t.Fatalf("fail: %+v", out)
			}
			// arguments=None is {} (echo then echoes nothing).
			out = e.run(t, tool, map[string]any{"server": "fs"})
			if out.Result != `{"ok": true, "result": "Echo: <nil>"}` {
				t.Fatalf("no arguments: %+v", out)
			}
			big := decode(t, e.run(t, tool, map[string]any{"server": "fs", "tool": "big", "arguments": map[string]any{"n": 100000}}).Result)
			// Cut, the client's JSON text no longer parses: the result is the text, as upstream.
			raw := `{"result":"` + strings.Repeat("x", 100000) + `"}`
			if big["truncated"] != true || big["result"] != raw[:65536]+"… [truncated]" {
				t.Fatalf("big: truncated=%v", big["truncated"])
			}
			before := server.Calls()
			denied := decode(t, e.run(t, tool, map[string]any{"server": "web"}).Result)
			if denied["raised"] != "PermissionError" || denied["message"] != strings.ReplaceAll(deniedWeb, "%s", "mcpt") {
				t.Fatalf("web: %v", denied)
			}
			if server.Calls() != before {
				t.Fatal("a denied call reached the MCP server")
			}
			// The host answers at the timeout (clamped up to 1 s); the plugin carries on.
			slow := decode(t, e.run(t, tool, map[string]any{"server": "fs", "tool": "sleep", "arguments": map[string]any{"seconds": 30}, "timeout": 0.2}).Result)
			if slow["ok"] != false || !strings.Contains(slow["error"].(string), "did not answer tool 'sleep' within 1s") {
				t.Fatalf("sleep: %v", slow)
			}
		})
	}
	for tool, msg := range map[string]string{"probe": "from a hook", "probe_async": "from an async hook"} {
		out := e.run(t, tool, map[string]any{})
		if out.Status != "blocked" || !strings.Contains(out.Result, `\"result\": \"Echo: `+msg+`\"`) {
			t.Errorf("%s: %+v", tool, out)
		}
	}
}

// Concurrent calls from sync and async handlers of one plugin do not deadlock it.
func TestCallMCPConcurrentHandlers(t *testing.T) {
	e := mcpEnv(t, mcpmem.New(t, "fs"), false)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 16 {
		tool := "mcp_sync"
		if i%2 == 1 {
			tool = "mcp_async"
		}
		wg.Go(func() {
			out := e.run(t, tool, map[string]any{"server": "fs", "arguments": map[string]any{"message": tool}})
			if out.Result != `{"ok": true, "result": "Echo: `+tool+`"}` {
				errs <- out.Result
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Without an MCP client configured the allowed call says how to add a server.
func TestCallMCPNoServerConfigured(t *testing.T) {
	e := mcpEnv(t, nil, false)
	env := decode(t, e.run(t, "mcp_sync", map[string]any{"server": "fs"}).Result)
	if env["ok"] != false || !strings.Contains(env["error"].(string), "no MCP server is configured") {
		t.Fatalf("got %v", env)
	}
	denied := decode(t, e.run(t, "mcp_sync", map[string]any{"server": "web"}).Result)
	if denied["raised"] != "PermissionError" {
		t.Fatalf("got %v", denied)
	}
}

func TestCallMCPFromGoPlugin(t *testing.T) {
	server := mcpmem.New(t, "fs", "web")
	e := mcpEnv(t, server, true)
	out := e.run(t, "go_mcp", map[string]any{"server": "fs", "tool": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	if out.Result != `{"ok":true,"result":"3","structuredContent":{"sum":3}}` {
		t.Fatalf("add: %+v", out)
	}
	out = e.run(t, "go_mcp", map[string]any{"server": "fs", "tool": "fail", "arguments": map[string]any{"message": "nope"}})
	if out.Result != `{"ok":false,"error":"nope"}` {
		t.Fatalf("fail: %+v", out)
	}
	before := server.Calls()
	denied := decode(t, e.run(t, "go_mcp", map[string]any{"server": "web", "tool": "echo"}).Result)
	if denied["denied"] != strings.ReplaceAll(deniedWeb, "%s", "gomcp") || denied["server"] != "web" {
		t.Fatalf("web: %v", denied)
	}
	if server.Calls() != before {
		t.Fatal("a denied call reached the MCP server")
	}
	out = e.run(t, "go_probe", map[string]any{})
	if out.Status != "blocked" || !strings.Contains(out.Result, `Echo: from a Go hook`) {
		t.Fatalf("hook: %+v", out)
	}
}
