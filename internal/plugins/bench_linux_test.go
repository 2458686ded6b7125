package plugins

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/mcp"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/testutil/mcpservers"

	"github.com/hermes-go/hermes/internal/testutil/mcpmem"
	"github.com/hermes-go/hermes/internal/tools"
)

// hookPlugin answers pre_tool_call with nothing, as an observer would.
const hookPlugin = `
def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, args, **kw: None)
`

// benchFanout fires one pre_tool_call at n Python plugins: the dispatcher runs
// different plugins' callbacks concurrently and gathers results in order.
func benchFanout(b *testing.B, n int) {
	plugins := map[string]string{}
	for i := range n {
		plugins[fmt.Sprintf("hook%02d", i)] = hookPlugin
	}
	e := newTestEnv(b, plugins, "")
	payload := map[string]any{"tool_name": "t", "args": map[string]any{"x": 1}, "task_id": "", "session_id": "",
		"tool_call_id": "c", "turn_id": "", "api_request_id": "", "middleware_trace": []any{}}
	ctx := context.Background()
	for range 20 { // warm every process
		e.m.Registry().Hooks().Fire(ctx, "pre_tool_call", payload)
	}
	b.ResetTimer()
	for b.Loop() {
		e.m.Registry().Hooks().Fire(ctx, "pre_tool_call", payload)
	}
}

func BenchmarkHookFanout1(b *testing.B)  { benchFanout(b, 1) }
func BenchmarkHookFanout10(b *testing.B) { benchFanout(b, 10) }

// BenchmarkCallMCP is one ctx.call_mcp of a Python plugin, from the plugin to
// an MCP server's echo and back into the plugin: the plugin loops, so the tool
// call around the loop is spread over many calls. The server is the official
// SDK's, in memory (see BenchmarkMCPDirectInMemory for its own cost); the lead
// switches both to server-everything over stdio with the real client.
func BenchmarkCallMCP(b *testing.B) {
	e := mcpEnv(b, mcpmem.New(b, "fs"), false)
	ctx := context.Background()
	run := func(n int) {
		out := e.m.pipeline().Run(ctx, tools.Call{Name: "mcp_loop", Args: map[string]any{"n": n}, ToolCallID: "bench"})
		if out.Result != `{"ok": true, "result": "Echo: hi"}` {
			b.Fatalf("mcp_loop: %+v", out)
		}
	}
	run(50) // warm the process and the session
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(200, b.N-done) // one tool call stays far below plugins.tool_call_timeout
		run(n)
		done += n
	}
}

// BenchmarkCallMCPReal is BenchmarkCallMCP through hermes' own MCP client to
// server-everything over stdio (installed by scripts/mcp-servers.sh): the
// issue's target compares it with internal/mcp's BenchmarkMCPDirect plus
// BenchmarkToolCallPython.
func BenchmarkCallMCPReal(b *testing.B) {
	dir, err := mcpservers.Installed()
	if err != nil {
		b.Fatal(err)
	}
	js := mcpservers.Script(dir, "server-everything")
	m := mcp.New(mcp.Options{Reaper: reaper.New(reaper.Options{}), Environ: os.Environ(), Config: &mcp.Config{Servers: []*mcp.ServerConfig{{
		Name: "fs", Command: "node", Args: []string{js, "stdio"}, Transport: "stdio", Enabled: true, Trust: mcp.TrustFull,
		Timeout: mcp.DefaultTimeout, ConnectTimeout: mcp.DefaultConnectTimeout}}}})
	b.Cleanup(func() { m.Close() })
	e := mcpEnv(b, m, false)
	ctx := context.Background()
	run := func(n int) {
		out := e.m.pipeline().Run(ctx, tools.Call{Name: "mcp_loop", Args: map[string]any{"n": n}, ToolCallID: "bench"})
		if !strings.Contains(out.Result, `"ok": true`) || !strings.Contains(out.Result, "Echo: hi") {
			b.Fatalf("mcp_loop: %+v", out)
		}
	}
	run(50)
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(200, b.N-done)
		run(n)
		done += n
	}
}

// sdkCaller is the least a host can do for ctx.call_mcp: the official SDK's
// own client over stdio, straight to the server, its text as the result; no
// breaker, trust gate, shared-connection bookkeeping or result conversion.
type sdkCaller struct{ cs *sdkmcp.ClientSession }

func (c sdkCaller) CallTool(ctx context.Context, _, tool string, args map[string]any, _ time.Duration) (string, error) {
	res, err := c.cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	text := ""
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*sdkmcp.TextContent); ok {
			text = t.Text
		}
	}
	return `{"result": ` + strconv.Quote(text) + `}`, nil
}

// BenchmarkCallMCPFloor is BenchmarkCallMCPReal with sdkCaller in place of
// hermes' client: the same plugin → host → server → host → plugin trip with
// nothing of hermes' client in it, the floor that trip has on this machine.
func BenchmarkCallMCPFloor(b *testing.B) {
	dir, err := mcpservers.Installed()
	if err != nil {
		b.Fatal(err)
	}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench"}, nil)
	cs, err := client.Connect(context.Background(), &sdkmcp.CommandTransport{
		Command: exec.Command("node", mcpservers.Script(dir, "server-everything"), "stdio")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	e := mcpEnv(b, sdkCaller{cs}, false)
	ctx := context.Background()
	run := func(n int) {
		out := e.m.pipeline().Run(ctx, tools.Call{Name: "mcp_loop", Args: map[string]any{"n": n}, ToolCallID: "bench"})
		if !strings.Contains(out.Result, `"ok": true`) || !strings.Contains(out.Result, "Echo: hi") {
			b.Fatalf("mcp_loop: %+v", out)
		}
	}
	run(50)
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(200, b.N-done)
		run(n)
		done += n
	}
}

// BenchmarkMCPDirectInMemory is the MCP call BenchmarkCallMCP makes, made
// directly: what call_mcp adds is the difference, less one plugin round trip.
func BenchmarkMCPDirectInMemory(b *testing.B) {
	c := mcpmem.New(b, "fs")
	ctx := context.Background()
	args := map[string]any{"message": "hi"}
	for b.Loop() {
		if _, err := c.CallTool(ctx, "fs", "echo", args, 30*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// callbackPlugin's tool makes n ctx.has_plugin calls: the cheapest call-back a
// plugin can make into hermes, so its cost is the protocol's alone.
const callbackPlugin = `
def register(ctx):
    def loop(args, **kw):
        for _ in range(int(args["n"])):
            ctx.has_plugin("nope")
        return "done"
    ctx.register_tool("callback_loop", "bench", {"name": "callback_loop", "description": "d",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}, loop)
`

// BenchmarkCallbackPython is one plugin → host → plugin call-back (ctx.has_plugin),
// looped in the plugin: the floor under every ctx call, call_mcp included.
func BenchmarkCallbackPython(b *testing.B) {
	e := newTestEnv(b, map[string]string{"cb": callbackPlugin}, "")
	ctx := context.Background()
	run := func(n int) {
		out := e.m.pipeline().Run(ctx, tools.Call{Name: "callback_loop", Args: map[string]any{"n": n}, ToolCallID: "bench"})
		if out.Result != "done" {
			b.Fatalf("callback_loop: %+v", out)
		}
	}
	run(50)
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(500, b.N-done)
		run(n)
		done += n
	}
}
