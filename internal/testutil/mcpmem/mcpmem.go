// Package mcpmem is a real MCP server built with the official Go SDK, reached
// over the SDK's in-memory transport: a real protocol exchange standing in for
// internal/mcp's Manager at the hostapi.MCPCaller seam in tests and benchmarks.
package mcpmem

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller calls the tools of its servers, one client session each. Every server
// has the same tools:
//
//	echo {message}  → "Echo: <message>" (as server-everything's echo)
//	add {a, b}      → the sum as text and as structuredContent {"sum": ...}
//	fail {message}  → an isError result with the message
//	big {n}         → n characters of "x"
//	sleep {seconds} → answers after seconds, or when the call is cancelled
type Caller struct {
	sessions map[string]*mcp.ClientSession
	calls    atomic.Int64
	last     atomic.Pointer[context.Context]
}

// LastContext is the context of the latest call (tests read what the caller
// put on it, such as the tool-call origin).
func (c *Caller) LastContext() context.Context {
	if p := c.last.Load(); p != nil {
		return *p
	}
	return context.Background()
}

// New starts one in-memory server per name, closed when tb ends.
func New(tb testing.TB, servers ...string) *Caller {
	tb.Helper()
	c := &Caller{sessions: map[string]*mcp.ClientSession{}}
	ctx := context.Background()
	for _, name := range servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "v0.0.1"}, nil)
		addTools(srv)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			tb.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "hermes-test", Version: "v0.0.1"}, nil)
		cs, err := client.Connect(ctx, ct, nil)
		if err != nil {
			tb.Fatal(err)
		}
		c.sessions[name] = cs
		tb.Cleanup(func() {
			_ = cs.Close()
			_ = ss.Wait()
		})
	}
	return c
}

// Calls is how many calls reached a server.
func (c *Caller) Calls() int64 { return c.calls.Load() }

// CallTool implements hostapi.MCPCaller: the tool-result JSON text the model's
// handler would return ({"result": ...}, {"error": ...}).
func (c *Caller) CallTool(ctx context.Context, server, tool string, args map[string]any, _ time.Duration) (string, error) {
	cs, ok := c.sessions[server]
	if !ok {
		return "", fmt.Errorf("unknown MCP server '%s'", server)
	}
	c.calls.Add(1)
	c.last.Store(&ctx)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("MCP server '%s': %w", server, err)
	}
	var texts []string
	for _, block := range res.Content {
		if t, ok := block.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "\n")
	out := map[string]any{"result": text}
	if res.IsError {
		out = map[string]any{"error": text}
	} else if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func addTools(srv *mcp.Server) {
	schema := func(props ...string) map[string]any {
		p := map[string]any{}
		for i := 0; i+1 < len(props); i += 2 {
			p[props[i]] = map[string]any{"type": props[i+1]}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	argsOf := func(req *mcp.CallToolRequest) map[string]any {
		var a map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a
	}
	num := func(v any) float64 { f, _ := v.(float64); return f }
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: schema("message", "string")}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(fmt.Sprintf("Echo: %v", argsOf(req)["message"]))}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: schema("a", "number", "b", "number")}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := argsOf(req)
		sum := num(a["a"]) + num(a["b"])
		return &mcp.CallToolResult{Content: text(fmt.Sprint(sum)), StructuredContent: map[string]any{"sum": sum}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: schema("message", "string")}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(fmt.Sprint(argsOf(req)["message"])), IsError: true}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: schema("n", "integer")}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(strings.Repeat("x", int(num(argsOf(req)["n"]))))}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "sleep", InputSchema: schema("seconds", "number")}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(time.Duration(num(argsOf(req)["seconds"]) * float64(time.Second))):
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: text("slept")}, nil
	})
}
