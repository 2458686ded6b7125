package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// BenchmarkHookCallPython is BenchmarkToolCallPython for a hook: an observer's
// pre_tool_call callback, called the way the dispatcher calls it (with and
// without the deadline a bounded hook carries).
func BenchmarkHookCallPython(b *testing.B) {
	for _, bounded := range []bool{false, true} {
		name := "plain"
		if bounded {
			name = "deadline"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			_ = os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte("name: p\n"), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "__init__.py"), []byte(
				"def register(ctx):\n    ctx.register_hook('pre_tool_call', lambda tool_name, args, **kw: None)\n"), 0o644)
			p, rec := startRegistered(b, dir, "p")
			var handle, hook string
			_, regHooks := rec.registered()
			for _, h := range regHooks {
				if h.Hook == "pre_tool_call" {
					handle, hook = h.Handle, h.Hook
				}
			}
			if handle == "" {
				b.Skipf("no pre_tool_call hook in %v", regHooks)
			}
			payload := map[string]any{"tool_name": "t", "args": map[string]any{"x": 1}, "task_id": "", "session_id": "",
				"tool_call_id": "c", "turn_id": "", "api_request_id": "", "middleware_trace": []any{}, "telemetry_schema_version": "hermes.observer.v1"}
			params := protocol.HookCallParams{Handle: handle, Hook: hook, Kwargs: payload}
			b.ResetTimer()
			for b.Loop() {
				cctx := ctx
				var cancel context.CancelFunc = func() {}
				if bounded {
					cctx, cancel = context.WithTimeout(ctx, 30*time.Second)
				}
				var out any
				if err := p.Call(cctx, protocol.MethodHookCall, params, &out); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		})
	}
}
