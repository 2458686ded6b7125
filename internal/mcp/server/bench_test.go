package server

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/tools"
)

// BenchmarkServeCallInMemory is the MCP layer's own share of a tools/call
// round trip: the SDK's client and server over an in-memory pipe, a runner
// that answers at once (no pipeline, no plugin).
func BenchmarkServeCallInMemory(b *testing.B) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, st, loaded([]*tools.Tool{tool("echo", nil)}, &recorder{}), Options{}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	for b.Loop() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatalf("%v %v", res, err)
		}
	}
	cs.Close()
	<-done
}
