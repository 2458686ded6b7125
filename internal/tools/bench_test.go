package tools

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
)

// benchPipeline runs one call of an in-process tool: the cost of the pipeline
// itself, which every tool call pays on top of its handler.
func benchPipeline(b *testing.B, hk HookFirer) {
	r := NewRegistry()
	if err := r.Register(echoTool("echo", "t", "p"), false); err != nil {
		b.Fatal(err)
	}
	p := &Pipeline{Registry: r, Hooks: hk}
	ctx := context.Background()
	c := Call{Name: "echo", Args: map[string]any{"name": "Ada"}, TaskID: "t1", ToolCallID: "c1"}
	if out := p.Run(ctx, c); out.Status != "ok" {
		b.Fatalf("warm-up call: %+v", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Run(ctx, c)
	}
}

func benchDispatcher() *hooks.Dispatcher {
	return hooks.New(hooks.Options{Timeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// No dispatcher at all (tests, `hermes tools call` before discovery).
func BenchmarkPipelineNoHooks(b *testing.B) { benchPipeline(b, nil) }

// A dispatcher with nothing registered: every hermes run without hook plugins.
func BenchmarkPipelineIdleDispatcher(b *testing.B) { benchPipeline(b, benchDispatcher()) }

// One in-process observer on each tool hook.
func BenchmarkPipelineHooked(b *testing.B) {
	d := benchDispatcher()
	none := func(context.Context, map[string]any) (any, error) { return nil, nil }
	for _, h := range []string{"pre_tool_call", "post_tool_call", "transform_tool_result"} {
		d.Register(h, hooks.Callback{PluginID: "obs", Name: "obs." + h, Invoke: none})
	}
	benchPipeline(b, d)
}
