package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Runner that records the calls it gets and answers from a table.
type recorder struct {
	mu    sync.Mutex
	calls []tools.Call
	out   map[string]tools.Outcome
}

func (r *recorder) Run(_ context.Context, c tools.Call) tools.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if o, ok := r.out[c.Name]; ok {
		return o
	}
	b, _ := json.Marshal(c.Args)
	return tools.Outcome{Result: string(b), Status: tools.StatusOK}
}

func tool(name string, schema map[string]any) *tools.Tool {
	return &tools.Tool{Name: name, Toolset: "t", Source: "plugin-x", Schema: schema,
		Handler: func(context.Context, map[string]any, map[string]any) (string, error) { return "", nil }}
}

func obj() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
}

// session serves load over an in-memory pipe and returns a connected client;
// the returned func closes the client and waits for Serve's result.
func session(t *testing.T, ctx context.Context, load Load, o Options) (*mcp.ClientSession, func() error) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, st, load, o) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, func() error {
		cs.Close()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after the client closed")
			return nil
		}
	}
}

func loaded(list []*tools.Tool, r Runner) Load {
	return func(context.Context) (Tools, error) { return Tools{List: list, Runner: r}, nil }
}

func TestToolsOffered(t *testing.T) {
	hostile := tool("hostile", map[string]any{"description": "reads \x1b]0;pwned\x07 files\x1b[2J\nsecond line",
		"parameters": obj()})
	list := []*tools.Tool{
		tool("plain", map[string]any{"description": "a plain tool", "parameters": obj()}),
		hostile,
		tool("no_params", map[string]any{"description": "takes nothing"}),
		tool("mcp__fs__read", map[string]any{"parameters": obj()}),
		tool("string_schema", map[string]any{"parameters": map[string]any{"type": "string"}}),
		tool("null_schema", map[string]any{"parameters": nil}),
		tool("typeless", map[string]any{"parameters": map[string]any{"properties": map[string]any{}}}),
	}
	var mu sync.Mutex
	var warnings []string
	warn := func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }
	ctx := context.Background()
	cs, end := session(t, ctx, loaded(list, &recorder{}), Options{Name: "hermes", Version: "test", Warn: warn})
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, mt := range res.Tools {
		got[mt.Name] = mt
	}
	tests := []struct {
		name    string
		offered bool
		desc    string
		schema  string
	}{
		{"plain", true, "a plain tool", `{"properties":{"n":{"type":"integer"}},"type":"object"}`},
		{"hostile", true, `reads \x1b]0;pwned\x07 files\x1b[2J` + "\nsecond line", ""},
		{"no_params", true, "takes nothing", `{"type":"object"}`},
		{"mcp__fs__read", false, "", ""},
		{"string_schema", false, "", ""},
		{"null_schema", false, "", ""},
		{"typeless", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt, ok := got[tt.name]
			if ok != tt.offered {
				t.Fatalf("offered = %v, want %v (tools: %v)", ok, tt.offered, keys(got))
			}
			if !ok {
				return
			}
			if mt.Description != tt.desc {
				t.Errorf("description = %q, want %q", mt.Description, tt.desc)
			}
			if strings.ContainsAny(mt.Description, "\x1b\x07") {
				t.Errorf("description keeps control characters: %q", mt.Description)
			}
			if tt.schema != "" {
				b, _ := json.Marshal(mt.InputSchema)
				if string(b) != tt.schema {
					t.Errorf("inputSchema = %s, want %s", b, tt.schema)
				}
			}
		})
	}
	if err := end(); err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"string_schema", "null_schema", "typeless"} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, `"`+name+`"`) && strings.Contains(w, "not offered") }) {
			t.Errorf("no warning for %s; warnings: %q", name, warnings)
		}
	}
	if slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "mcp__") }) {
		t.Errorf("hermes' own MCP tools are left out silently, got %q", warnings)
	}
}

func keys(m map[string]*mcp.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestCall(t *testing.T) {
	rec := &recorder{out: map[string]tools.Outcome{
		"blocked": {Result: `{"error": "no"}`, Status: tools.StatusBlocked, ErrorType: "blocked"},
		"failing": {Result: `{"error": "boom"}`, Status: tools.StatusError, ErrorType: "tool_error"},
	}}
	list := []*tools.Tool{tool("echo", map[string]any{"parameters": obj()}), tool("blocked", nil), tool("failing", nil)}
	ctx := context.Background()
	cs, end := session(t, ctx, loaded(list, rec), Options{})
	defer func() {
		if err := end(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	tests := []struct {
		name    string
		tool    string
		args    any
		isError bool
		text    string // the content's text, or a part of it
		runs    bool   // the call reached the pipeline
	}{
		{"result", "echo", map[string]any{"n": 1}, false, `{"n":1}`, true},
		{"exact numbers", "echo", json.RawMessage(`{"big": 12345678901234567890, "f": 1.0}`), false, `{"big":12345678901234567890,"f":1.0}`, true},
		{"no arguments", "echo", nil, false, `{}`, true},
		{"blocked is a tool error", "blocked", map[string]any{}, true, `{"error": "no"}`, true},
		{"failure is a tool error", "failing", map[string]any{}, true, `{"error": "boom"}`, true},
		{"arguments not an object", "echo", []any{1, 2}, true, "they must be a JSON object, got an array", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rec.calls)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("protocol error %v, want a tool result", err)
			}
			if res.IsError != tt.isError {
				t.Errorf("isError = %v, want %v", res.IsError, tt.isError)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, tt.text) {
				t.Errorf("text = %s, want it to contain %s", text, tt.text)
			}
			rec.mu.Lock()
			ran := len(rec.calls) > before
			var c tools.Call
			if ran {
				c = rec.calls[len(rec.calls)-1]
			}
			rec.mu.Unlock()
			if ran != tt.runs {
				t.Fatalf("reached the pipeline = %v, want %v", ran, tt.runs)
			}
			if ran && (c.Origin.Kind != tools.FromMCPClient || c.TaskID != "mcp" || !strings.HasPrefix(c.ToolCallID, "mcp-")) {
				t.Errorf("call = %+v, want origin MCP client, task mcp, an mcp- call id", c)
			}
		})
	}
	// A name that was never offered is the protocol's unknown tool.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("unknown tool: err = %v", err)
	}
}

// initialize is answered while the tools still load; tools/list waits for them.
func TestInitializeDoesNotWaitForLoad(t *testing.T) {
	release := make(chan struct{})
	load := func(ctx context.Context) (Tools, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return Tools{}, ctx.Err()
		}
		return Tools{List: []*tools.Tool{tool("late", nil)}, Runner: &recorder{}}, nil
	}
	ctx := context.Background()
	cs, end := session(t, ctx, load, Options{}) // returns only after initialize
	listed := make(chan []*mcp.Tool, 1)
	go func() {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Errorf("tools/list: %v", err)
			listed <- nil
			return
		}
		listed <- res.Tools
	}()
	select {
	case <-listed:
		t.Fatal("tools/list answered before the tools were loaded")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-listed; len(got) != 1 || got[0].Name != "late" {
		t.Errorf("tools = %v, want [late]", got)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadFails(t *testing.T) {
	boom := errors.New("--toolsets names \"nope\"")
	release := make(chan struct{})
	load := func(context.Context) (Tools, error) { <-release; return Tools{}, boom }
	ctx := context.Background()
	cs, end := session(t, ctx, load, Options{})
	errc := make(chan error, 1)
	go func() { _, err := cs.ListTools(ctx, nil); errc <- err }()
	close(release)
	if err := <-errc; err == nil {
		t.Error("tools/list succeeded after the load failed")
	}
	if err := end(); !errors.Is(err, boom) {
		t.Errorf("Serve = %v, want the load's error", err)
	}
}

// The client leaving while the plugins still load stops the load, and is no failure.
func TestEOFDuringLoad(t *testing.T) {
	stopped := make(chan struct{})
	load := func(ctx context.Context) (Tools, error) {
		<-ctx.Done()
		close(stopped)
		return Tools{}, ctx.Err()
	}
	_, end := session(t, context.Background(), load, Options{})
	if err := end(); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	<-stopped
}

func TestContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, st, loaded(nil, &recorder{}), Options{}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return when ctx ended")
	}
}
