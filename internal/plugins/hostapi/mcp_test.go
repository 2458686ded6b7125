package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/testutil/mcpmem"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// namedCaller is a plugin whose key (the config id) differs from its manifest name.
type namedCaller struct {
	testCaller
	name string
}

func (c *namedCaller) Manifest() *manifest.Manifest { return &manifest.Manifest{Name: c.name} }

// recordingMCP is the client at the seam: it records what it was asked and
// answers with raw, err, or (block) not at all until the call is given up.
type recordingMCP struct {
	mu       sync.Mutex
	raw      string
	err      error
	block    chan struct{} // non-nil: ignore ctx and wait on it
	calls    int
	args     map[string]any
	timeout  time.Duration
	deadline time.Duration // the ctx deadline, from the call's start
}

func (m *recordingMCP) CallTool(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (string, error) {
	m.mu.Lock()
	m.calls++
	m.args, m.timeout = args, timeout
	if d, ok := ctx.Deadline(); ok {
		m.deadline = time.Until(d)
	}
	block := m.block
	m.mu.Unlock()
	if block != nil {
		<-block
	}
	return m.raw, m.err
}

func (m *recordingMCP) seen() (calls int, args map[string]any, timeout, deadline time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, m.args, m.timeout, m.deadline
}

// mcpSession is a session of plugin "cat/x" (manifest name "x") with config.yaml
// holding cfg (or, with cfg "<dir>", a directory where the file should be).
func mcpSession(t *testing.T, cfg string, mcp MCPCaller) *Session {
	t.Helper()
	h := home.Home{Dir: t.TempDir()}
	switch cfg {
	case "":
	case "<dir>":
		if err := os.Mkdir(h.ConfigPath(), 0o700); err != nil {
			t.Fatal(err)
		}
	default:
		if err := os.WriteFile(h.ConfigPath(), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host := New(Options{Registry: registry.New(registry.Options{}), Store: configStore(h), Home: h, Plugins: directory{}, MCP: mcp})
	t.Cleanup(host.Close)
	return host.Session(&namedCaller{testCaller: testCaller{id: "cat/x"}, name: "x"})
}

func callFacade(t *testing.T, s *Session, args []any, kwargs map[string]any) (map[string]any, *protocol.Error) {
	t.Helper()
	params, err := json.Marshal(protocol.FacadeParams{Name: "call_mcp", Args: args, Kwargs: kwargs})
	if err != nil {
		t.Fatal(err)
	}
	v, perr := call(t, s, protocol.MethodFacade, string(params))
	env, _ := v.(map[string]any)
	return env, perr
}

const deniedFS = "Plugin 'x' is not allowed to call MCP server 'fs'. Add it to plugins.entries.cat/x.mcp_allowlist " +
	"in config.yaml to grant access (default is no MCP access)."

// The gate reads plugins.entries.<id>.mcp_allowlist at each call and fails
// closed; a denied call never reaches the client.
func TestCallMCPGate(t *testing.T) {
	entry := func(v string) string { return "plugins:\n  entries:\n    cat/x:\n      mcp_allowlist: " + v + "\n" }
	tests := []struct {
		name, cfg, server string
		allow             bool
	}{
		{"no config", "", "fs", false},
		{"no entry", "plugins:\n  enabled: [cat/x]\n", "fs", false},
		{"no key", "plugins:\n  entries:\n    cat/x:\n      settings: {a: 1}\n", "fs", false},
		{"star string", entry(`"*"`), "fs", false},
		{"star in list is no wildcard", entry(`["*"]`), "fs", false},
		{"star in list names a server called *", entry(`["*"]`), "*", true},
		{"listed", entry("[fs, web]"), "fs", true},
		{"not listed", entry("[web]"), "fs", false},
		{"a mapping", entry("{fs: true}"), "fs", false},
		{"null", entry("null"), "fs", false},
		{"str() of a number", entry("[5]"), "5", true},
		{"str() of a bool", entry("[true]"), "True", true},
		{"another plugin's list", "plugins:\n  entries:\n    x:\n      mcp_allowlist: [fs]\n", "fs", false},
		{"unreadable config", "<dir>", "fs", false},
		{"invalid config", "plugins: [\n", "fs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcp := &recordingMCP{raw: `{"result": "ok"}`}
			s := mcpSession(t, tt.cfg, mcp)
			env, perr := callFacade(t, s, []any{tt.server, "read"}, map[string]any{"arguments": map[string]any{"p": 1}})
			calls, _, _, _ := mcp.seen()
			if !tt.allow {
				want := strings.ReplaceAll(deniedFS, "'fs'", "'"+tt.server+"'")
				if perr == nil || perr.Code != protocol.CodePermission || perr.Message != want {
					t.Fatalf("got %v, %+v; want PermissionError %q", env, perr, want)
				}
				if calls != 0 {
					t.Fatalf("a denied call reached the client %d times", calls)
				}
				return
			}
			if perr != nil || env["ok"] != true || env["result"] != "ok" || calls != 1 {
				t.Fatalf("got %v, %+v after %d calls; want the result", env, perr, calls)
			}
		})
	}
}

// The config is read at each call: granting and revoking take effect at once.
func TestCallMCPGateReadsConfigEachCall(t *testing.T) {
	mcp := &recordingMCP{raw: `{"result": "ok"}`}
	s := mcpSession(t, "", mcp)
	path := s.h.opts.Store.Path
	for i, cfg := range []string{"plugins:\n  entries:\n    cat/x:\n      mcp_allowlist: [fs]\n", "plugins:\n  entries:\n    cat/x:\n      mcp_allowlist: []\n"} {
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		_, perr := callFacade(t, s, []any{"fs", "read"}, nil)
		if (perr == nil) != (i == 0) {
			t.Fatalf("config %d: error %v", i, perr)
		}
	}
}

func TestMCPTimeout(t *testing.T) {
	tests := []struct {
		in   any
		want time.Duration
	}{
		{nil, 30 * time.Second},
		{"soon", 30 * time.Second},
		{[]any{1}, 30 * time.Second},
		{map[string]any{}, 30 * time.Second},
		{"nan", 30 * time.Second},
		{float64(5), 5 * time.Second},
		{2.5, 2500 * time.Millisecond},
		{json.Number("45"), 45 * time.Second},
		{" 7 ", 7 * time.Second},
		{true, time.Second},
		{false, time.Second},
		{0.001, time.Second},
		{-3.0, time.Second},
		{1e9, 600 * time.Second},
		{"inf", 600 * time.Second},
		{math.Inf(-1), time.Second},
	}
	for _, tt := range tests {
		if got := MCPTimeout(tt.in); got != tt.want {
			t.Errorf("MCPTimeout(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

const allowFS = "plugins:\n  entries:\n    cat/x:\n      mcp_allowlist: [fs]\n"

// The clamped timeout reaches the client and bounds the call's context.
func TestCallMCPTimeoutReachesClient(t *testing.T) {
	for _, tt := range []struct {
		timeout any
		want    time.Duration
	}{{nil, 30 * time.Second}, {0.01, time.Second}, {12, 12 * time.Second}, {1e6, 600 * time.Second}} {
		mcp := &recordingMCP{raw: `{"result": "ok"}`}
		s := mcpSession(t, allowFS, mcp)
		if _, perr := callFacade(t, s, []any{"fs", "read"}, map[string]any{"timeout": tt.timeout}); perr != nil {
			t.Fatal(perr)
		}
		_, args, timeout, deadline := mcp.seen()
		if timeout != tt.want || deadline > tt.want || deadline < tt.want-5*time.Second {
			t.Errorf("timeout %v: client got %s with a deadline %s away; want %s", tt.timeout, timeout, deadline, tt.want)
		}
		if args == nil || len(args) != 0 {
			t.Errorf("arguments=None reached the client as %#v, want {}", args)
		}
	}
}

// A client that ignores its context still cannot hold the plugin past the timeout.
func TestCallMCPTimeoutEnforced(t *testing.T) {
	mcp := &recordingMCP{block: make(chan struct{})}
	defer close(mcp.block)
	s := mcpSession(t, allowFS, mcp)
	env, perr := callFacade(t, s, []any{"fs", "slow"}, map[string]any{"timeout": 1})
	if perr != nil {
		t.Fatal(perr)
	}
	want := map[string]any{"ok": false, "error": "MCP server 'fs' did not answer tool 'slow' within 1s (ctx.call_mcp's timeout; pass a larger timeout=, at most 600)"}
	if !reflect.DeepEqual(env, want) {
		t.Fatalf("got %v, want %v", env, want)
	}
}

func TestCallMCPEnvelope(t *testing.T) {
	long := strings.Repeat("x", mcpResultCharCap+10)
	wide := strings.Repeat("é", mcpResultCharCap+1) // 2 bytes each: the cap counts characters
	exact := strings.Repeat("é", mcpResultCharCap)
	tests := []struct {
		name string
		raw  string
		err  error
		want map[string]any
	}{
		{"result", `{"result": "hi"}`, nil, map[string]any{"ok": true, "result": "hi"}},
		{"structured", `{"result": "3", "structuredContent": {"sum": 3}}`, nil,
			map[string]any{"ok": true, "result": "3", "structuredContent": map[string]any{"sum": json.Number("3")}}},
		{"error", `{"error": "no such file"}`, nil, map[string]any{"ok": false, "error": "no such file"}},
		{"error wins over result", `{"error": "e", "result": "r"}`, nil, map[string]any{"ok": false, "error": "e"}},
		{"error null", `{"error": null}`, nil, map[string]any{"ok": false, "error": nil}},
		{"other object", `{"a": 12345678901234567890}`, nil, map[string]any{"ok": true, "result": map[string]any{"a": json.Number("12345678901234567890")}}},
		{"list", `[1, "a"]`, nil, map[string]any{"ok": true, "result": []any{json.Number("1"), "a"}}},
		{"plain text", `hello there`, nil, map[string]any{"ok": true, "result": "hello there"}},
		{"trailing data", `{"result": 1} x`, nil, map[string]any{"ok": true, "result": `{"result": 1} x`}},
		{"empty", ``, nil, map[string]any{"ok": true, "result": ""}},
		{"truncated", long, nil, map[string]any{"ok": true, "result": long[:mcpResultCharCap] + "… [truncated]", "truncated": true}},
		{"truncated by characters", wide, nil, map[string]any{"ok": true, "result": exact + "… [truncated]", "truncated": true}},
		{"at the cap", exact, nil, map[string]any{"ok": true, "result": exact}},
		{"client error", "", errors.New("MCP server 'fs' is unreachable after 3 consecutive failures"), map[string]any{"ok": false, "error": "MCP server 'fs' is unreachable after 3 consecutive failures"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mcpSession(t, allowFS, &recordingMCP{raw: tt.raw, err: tt.err})
			env, err := s.CallMCP(context.Background(), "fs", "read", nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(env, tt.want) {
				t.Fatalf("got  %.300v\nwant %.300v", env, tt.want)
			}
		})
	}
}

// Without an MCP client the gate still runs first; past it, the envelope says how to add a server.
func TestCallMCPNoClient(t *testing.T) {
	s := mcpSession(t, allowFS, nil)
	env, perr := callFacade(t, s, []any{"fs", "read"}, nil)
	if perr != nil || env["ok"] != false || !strings.Contains(env["error"].(string), "no MCP server is configured") ||
		!strings.Contains(env["error"].(string), "`hermes mcp add NAME -- CMD ARGS…`") {
		t.Fatalf("got %v, %v", env, perr)
	}
	if _, perr := callFacade(t, s, []any{"web", "read"}, nil); perr == nil || perr.Code != protocol.CodePermission {
		t.Fatalf("a denied call without a client: %v", perr)
	}
}

func TestCallMCPArgumentsMustBeADict(t *testing.T) {
	mcp := &recordingMCP{raw: `{"result": "ok"}`}
	s := mcpSession(t, allowFS, mcp)
	_, perr := callFacade(t, s, []any{"fs", "read"}, map[string]any{"arguments": []any{1}})
	if perr == nil || perr.Code != protocol.CodeTypeError || perr.Message != "ctx.call_mcp: arguments must be a dict (or None), not list" {
		t.Fatalf("got %+v", perr)
	}
	if calls, _, _, _ := mcp.seen(); calls != 0 {
		t.Fatal("bad arguments reached the client")
	}
}

// Through a real MCP server (the SDK's, in memory): the envelope of real results.
func TestCallMCPRealServer(t *testing.T) {
	s := mcpSession(t, allowFS, mcpmem.New(t, "fs"))
	ctx := context.Background()
	tests := []struct {
		tool string
		args map[string]any
		want map[string]any
	}{
		{"echo", map[string]any{"message": "hi"}, map[string]any{"ok": true, "result": "Echo: hi"}},
		{"add", map[string]any{"a": 2, "b": 3}, map[string]any{"ok": true, "result": "5", "structuredContent": map[string]any{"sum": json.Number("5")}}},
		{"fail", map[string]any{"message": "disk full"}, map[string]any{"ok": false, "error": "disk full"}},
	}
	for _, tt := range tests {
		env, err := s.CallMCP(ctx, "fs", tt.tool, tt.args, 0)
		if err != nil || !reflect.DeepEqual(env, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.tool, env, err, tt.want)
		}
	}
	env, err := s.CallMCP(ctx, "fs", "big", map[string]any{"n": 1 << 20}, 0)
	if err != nil || env["truncated"] != true || len(env["result"].(string)) != mcpResultCharCap+len("… [truncated]") {
		t.Errorf("big: truncated=%v len=%d, %v", env["truncated"], len(env["result"].(string)), err)
	}
	env, _ = s.CallMCP(ctx, "fs", "no_such_tool", nil, 0)
	if env["ok"] != false || !strings.Contains(env["error"].(string), "no_such_tool") {
		t.Errorf("unknown tool: %v", env)
	}
}

// An in-process Go plugin gets the same gate (a typed error) and envelope.
func TestLocalContextCallMCP(t *testing.T) {
	s := mcpSession(t, allowFS, mcpmem.New(t, "fs"))
	c := s.LocalContext("default", func(func()) {})
	res, err := c.CallMCP(context.Background(), "fs", "add", map[string]any{"a": 1, "b": 1}, 0)
	if err != nil || !res.OK || res.Result != "2" || !reflect.DeepEqual(res.StructuredContent, map[string]any{"sum": 2.0}) {
		t.Fatalf("got %+v, %v", res, err)
	}
	_, err = c.CallMCP(context.Background(), "web", "add", nil, 0)
	var denied *pluginsdk.MCPNotAllowedError
	if !errors.As(err, &denied) || denied.Server != "web" || !strings.HasPrefix(denied.Message, "Plugin 'x' is not allowed to call MCP server 'web'.") {
		t.Fatalf("denied: %v", err)
	}
}
