package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEverythingOverStdio(t *testing.T) {
	m, _ := newTestManager(t, &ServerConfig{Name: "ev", Command: nodePath(t), Args: []string{serverJS(t, "server-everything"), "stdio"}})
	ctx := context.Background()
	got, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi there"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("not JSON: %s", got)
	}
	if r, _ := res["result"].(string); !strings.Contains(r, "hi there") {
		t.Fatalf("echo result = %s", got)
	}
	// The one connection is shared: a second call does not start another server.
	st1 := m.Statuses()[0]
	if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "again"}, 0); err != nil {
		t.Fatal(err)
	}
	if st1.State != "connected" || st1.Tools < 5 {
		t.Fatalf("status = %+v", st1)
	}
	list, warns := m.ModelTools(ctx, nil)
	names := map[string]bool{}
	for _, tl := range list {
		names[tl.Name] = true
		if tl.Toolset != "mcp-ev" {
			t.Fatalf("toolset of %s = %s", tl.Name, tl.Toolset)
		}
	}
	for _, want := range []string{"mcp__ev__echo", "mcp__ev__list_resources", "mcp__ev__read_resource", "mcp__ev__list_prompts", "mcp__ev__get_prompt"} {
		if !names[want] {
			t.Errorf("missing %s in %v (warnings %v)", want, names, warns)
		}
	}
}

func TestEverythingStructuredAndImage(t *testing.T) {
	m, _ := newTestManager(t, &ServerConfig{Name: "ev", Command: nodePath(t), Args: []string{serverJS(t, "server-everything")}})
	ctx := context.Background()
	_, list, err := m.Connect(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list {
		names = append(names, tl.Name)
	}
	for _, tc := range []struct{ tool, want string }{
		{"get-structured-content", `temperature`},
		{"get-tiny-image", "[image: image/png"},
	} {
		if !strings.Contains(strings.Join(names, ","), tc.tool) {
			t.Fatalf("server-everything has no %s: %v", tc.tool, names)
		}
		args := map[string]any{}
		if tc.tool == "get-structured-content" {
			args["location"] = "New York"
		}
		got, err := m.CallTool(ctx, "ev", tc.tool, args, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s result %s lacks %q", tc.tool, got, tc.want)
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestEverythingOverStreamableHTTP(t *testing.T) {
	port := freePort(t)
	cmd := exec.Command(nodePath(t), serverJS(t, "server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatal("server-everything streamableHttp did not listen")
		}
		time.Sleep(50 * time.Millisecond)
	}
	secret := "Bearer sk-topsecret-header-value"
	m, _ := newTestManager(t, &ServerConfig{Name: "web", URL: url, Headers: map[string]string{"Authorization": secret}})
	got, err := m.CallTool(context.Background(), "web", "echo", map[string]any{"message": "over http"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "over http") {
		t.Fatalf("result %s", got)
	}
	b, _ := json.Marshal(m.Statuses())
	if strings.Contains(string(b), "topsecret") {
		t.Fatalf("status shows the header secret: %s", b)
	}
}

func TestFaults(t *testing.T) {
	py := python(t)
	bad := badServer(t)
	m, logs := newTestManager(t,
		&ServerConfig{Name: "bad", Command: py, Args: []string{bad}, Timeout: 2 * time.Second},
		&ServerConfig{Name: "crash", Command: py, Args: []string{bad, "crash"}},
		&ServerConfig{Name: "missing", Command: "no-such-mcp-server-binary"},
		&ServerConfig{Name: "nofile", Command: "/no/such/mcp-server"},
		&ServerConfig{Name: "slow", Command: py, Args: []string{bad, "slowstart"}, ConnectTimeout: 500 * time.Millisecond},
	)
	ctx := context.Background()
	cases := []struct {
		name, server, tool string
		wantErr, wantOut   string
	}{
		{"unknown server", "nope", "x", `unknown MCP server "nope"; the configured servers are: bad, crash, missing, nofile, slow`, ""},
		{"command not found", "missing", "x", `command "no-such-mcp-server-binary" not found on PATH`, ""},
		{"no such file", "nofile", "x", `command "/no/such/mcp-server" does not exist or is not an executable file`, ""},
		// What the server said before it died is in the error, not only in the log.
		{"crash at start", "crash", "x", `the server exited (exit status 3); it said: badserver starting mode=crash`, ""},
		{"hang past connect_timeout", "slow", "x", `did not finish connecting within 500ms (connect_timeout in config.yaml)`, ""},
		{"ok", "bad", "ok", "", `{"result":"done ok"}`},
		{"hang past timeout", "bad", "hang", `MCP server "bad" did not answer hang within 2s (timeout in config.yaml)`, ""},
		{"tool error redacted", "bad", "fail", "", `{"error":"denied: Authorization: Bearer [REDACTED] token=[REDACTED]"}`},
		{"huge result", "bad", "huge", "", `{"result":"yyyy`},
		{"env allowlist", "bad", "env", "", `PATH`},
		{"crash mid-call", "bad", "exit", `MCP server "bad", tool exit`, ""},
		{"reconnects after the crash", "bad", "ok", "", `{"result":"done ok"}`},
		{"invalid JSON-RPC", "bad", "garbage", `MCP server "bad", tool garbage`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := m.CallTool(ctx, tc.server, tc.tool, nil, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q (result %.200s)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !strings.HasPrefix(got, tc.wantOut) && !strings.Contains(got, tc.wantOut) {
				t.Fatalf("got %.300s, want %q", got, tc.wantOut)
			}
			if tc.tool == "huge" && len(got) < 1<<20 {
				t.Fatalf("huge result cut to %d bytes", len(got))
			}
			if tc.tool == "env" && strings.Contains(got, "LEAK_ME") {
				t.Fatal("a variable outside the allowlist reached the server")
			}
			_ = start
		})
	}
	if !strings.Contains(logs.text(), "bad: badserver starting mode=serve") {
		t.Errorf("server stderr not drained to the log, got:\n%s", logs.text())
	}
}

func TestInvalidSchemaSkippedOthersKept(t *testing.T) {
	m, _ := newTestManager(t, &ServerConfig{Name: "bad", Command: python(t), Args: []string{badServer(t)}})
	list, warns := m.ModelTools(context.Background(), nil)
	names := map[string]bool{}
	for _, tl := range list {
		names[tl.Name] = true
	}
	if names["mcp__bad__bad_schema"] || !names["mcp__bad__ok"] {
		t.Fatalf("tools = %v", names)
	}
	joined := strings.Join(warns, "\n")
	if !strings.Contains(joined, `MCP tool "bad_schema" of server "bad" has an invalid input schema`) {
		t.Fatalf("warnings = %s", joined)
	}
	long, _ := ToolName("bad", strings.Repeat("x", 80))
	if !names[long] || len(long) != 64 || !strings.Contains(joined, "over 64 characters") {
		t.Fatalf("long name %s not offered or not warned: %s", long, joined)
	}
}

func TestNoServerOutlivesClose(t *testing.T) {
	m, _ := newTestManager(t, &ServerConfig{Name: "bad", Command: python(t), Args: []string{badServer(t)}})
	if _, err := m.CallTool(context.Background(), "bad", "ok", nil, 0); err != nil {
		t.Fatal(err)
	}
	got, _ := m.CallTool(context.Background(), "bad", "env", nil, 0)
	_ = got
	pids := childPIDs(t)
	if len(pids) == 0 {
		t.Fatal("no server process found while connected")
	}
	m.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(childPIDs(t)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("server processes outlived Close: %v", childPIDs(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childPIDs lists the live (non-zombie) badserver.py processes that are children of this test.
func childPIDs(t *testing.T) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	me := fmt.Sprint(os.Getpid())
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[1] == me && f[0] != "Z" {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(cmdline), "badserver.py") {
				out = append(out, e.Name())
			}
		}
	}
	return out
}
