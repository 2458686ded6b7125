package plugins

import (
	"context"
	"fmt"
	"testing"
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
