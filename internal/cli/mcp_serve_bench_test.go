package cli_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// BenchmarkMCPServeToolCall is one tools/call round trip from an MCP client
// through `hermes mcp serve` (the pipeline and the pre_tool_call hook) to a
// Python plugin's tool and back.
func BenchmarkMCPServeToolCall(b *testing.B) {
	h := newMCPHome(b)
	var stderr syncbuf.Buffer
	cs := connectMCP(b, h.command(b, &stderr, "--toolsets", "demo"), &stderr)
	defer cs.Close()
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "hello"}}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError { // plugins loaded, warm
		b.Fatalf("warm-up: %v %v\n%s", res, err, stderr.String())
	}
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("tools/call: %v %v", res, err)
		}
	}
}

// BenchmarkMCPServeStart is a client starting `hermes mcp serve` until its
// initialize is answered ("initialize"), and until tools/list is, which waits
// for the Python plugin to have registered ("tools-list"); each op is a new
// hermes process, stopped by closing stdin.
func BenchmarkMCPServeStart(b *testing.B) {
	h := newMCPHome(b)
	ctx := context.Background()
	b.Run("initialize", func(b *testing.B) {
		for b.Loop() {
			var stderr syncbuf.Buffer
			cs := connectMCP(b, h.command(b, &stderr), &stderr)
			b.StopTimer()
			cs.Close()
			b.StartTimer()
		}
	})
	b.Run("tools-list", func(b *testing.B) {
		for b.Loop() {
			var stderr syncbuf.Buffer
			cs := connectMCP(b, h.command(b, &stderr), &stderr)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cs.Close()
			b.StartTimer()
		}
	})
}
