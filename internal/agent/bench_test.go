package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/tools"
)

// The turn benchmark: one turn in which the (instant, loopback) model asks
// for 10 tool calls of a Python plugin tool, then answers; with no hook plugins and
// with 10 plugins hooked into pre_tool_call and post_tool_call, side by side.

const toolPlugin = `
def register(ctx):
    ctx.register_tool(name="work", toolset="bench", schema={"name": "work", "description": "d",
                      "parameters": {"type": "object", "properties": {"i": {"type": "integer"}}}},
                      handler=lambda args, **kw: '{"ok": true}')
`

const hookedPlugin = `
def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, args, **kw: None)
    ctx.register_hook("post_tool_call", lambda tool_name, result, **kw: None)
`

func benchTurn(b *testing.B, hooked int) {
	dir := b.TempDir()
	h := home.Home{Dir: dir, Profile: "custom"}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	names := []string{"worker"}
	write(filepath.Join(h.PluginsDir(), "worker", "plugin.yaml"), "name: worker\n")
	write(filepath.Join(h.PluginsDir(), "worker", "__init__.py"), toolPlugin)
	for i := range hooked {
		n := fmt.Sprintf("hook%02d", i)
		names = append(names, n)
		write(filepath.Join(h.PluginsDir(), n, "plugin.yaml"), "name: "+n+"\n")
		write(filepath.Join(h.PluginsDir(), n, "__init__.py"), hookedPlugin)
	}
	write(h.ConfigPath(), "_config_version: 21\nplugins:\n  enabled: ["+strings.Join(names, ", ")+"]\n")
	m := plugins.New(plugins.Options{Home: h, Env: os.Getenv, Environ: os.Environ, Cwd: dir, HostVersion: "0.0.0-bench"})
	ctx := context.Background()
	if err := m.Discover(); err != nil {
		b.Fatal(err)
	}
	if err := m.Load(ctx, nil); err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	reg := m.Registry()
	if _, ok := reg.Tools().Get("work"); !ok {
		b.Skip("the Python plugin did not load (no python3?)")
	}

	srv := llmtest.NewServer(b)
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	ag := agent.New(agent.Options{Client: client, Model: "fake", Pipeline: &tools.Pipeline{Registry: reg.Tools(), Hooks: reg.Hooks(), Middleware: reg.ToolMiddleware()}, Hooks: reg.Hooks()})
	var calls []llmtest.CallReply
	for i := range 10 {
		calls = append(calls, llmtest.Call("work", map[string]any{"i": i}))
	}
	turn := func() {
		srv.Enqueue(llmtest.ToolCalls(calls...), llmtest.Text("done"))
		s := ag.NewSession(ctx, "bench")
		t, err := ag.Run(ctx, s, "go")
		if err != nil || t.Final != "done" || len(t.ToolCalls) != 10 {
			b.Fatalf("turn: %v %+v", err, t)
		}
	}
	turn() // warm
	b.ResetTimer()
	for b.Loop() {
		turn()
	}
}

func BenchmarkTurn10ToolCalls(b *testing.B)         { benchTurn(b, 0) }
func BenchmarkTurn10ToolCalls10Hooked(b *testing.B) { benchTurn(b, 10) }
