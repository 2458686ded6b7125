package shellhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/testutil/procs"
)

const python = "/usr/bin/python3"

// script writes an executable file into dir and returns its path.
func script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(t *testing.T, event string, entry map[string]any) Spec {
	t.Helper()
	specs, _, err := Parse(map[string]any{event: []any{entry}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("Parse: %v (%d specs)", err, len(specs))
	}
	return specs[0]
}

func terminalPayload(command string) map[string]any {
	return map[string]any{
		"tool_name": "terminal", "args": map[string]any{"command": command}, "task_id": "t1", "session_id": "s1",
		"tool_call_id": "c1", "turn_id": "u1", "api_request_id": "r1", "middleware_trace": []any{},
		"telemetry_schema_version": "hermes.observer.v1",
	}
}

// claudeGuard is a Claude Code PreToolUse script, unchanged: it reads
// tool_input.command and answers {"decision": "block", "reason": ...}.
const claudeGuard = `#!/usr/bin/python3
import json, sys
data = json.load(sys.stdin)
cmd = data.get("tool_input", {}).get("command", "")
if "rm -rf" in cmd:
    print(json.dumps({"decision": "block", "reason": "refusing to run: " + cmd}))
sys.exit(0)
`

// claudeDeny answers in Claude Code's hookSpecificOutput shape.
const claudeDeny = `#!/usr/bin/python3
import json, sys
data = json.load(sys.stdin)
if data["tool_name"] == "terminal" and "curl" in data["tool_input"]["command"]:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no network from the agent"}}))
elif data["tool_input"]["command"].startswith("sudo"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask", "permissionDecisionReason": "sudo needs a human"}}))
elif data["tool_input"]["command"].startswith("ls"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}))
`

func TestHookDirectives(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{Environ: []string{"PATH=/usr/bin:/bin"}, Dir: dir}
	tests := []struct {
		name    string
		body    string // a script; command runs it
		command string // else this command
		entry   map[string]any
		payload map[string]any
		want    map[string]any
		warn    string
	}{
		{name: "claude code decision block", body: claudeGuard, payload: terminalPayload("rm -rf /tmp/x"),
			want: map[string]any{"action": "block", "message": "refusing to run: rm -rf /tmp/x"}},
		{name: "claude code script allows", body: claudeGuard, payload: terminalPayload("ls")},
		{name: "hookSpecificOutput deny", body: claudeDeny, payload: terminalPayload("curl example.com"),
			want: map[string]any{"action": "block", "message": "no network from the agent"}},
		{name: "hookSpecificOutput ask is hermes approval", body: claudeDeny, payload: terminalPayload("sudo ls"),
			want: map[string]any{"action": "approve", "message": "sudo needs a human"}},
		{name: "hookSpecificOutput updatedInput is modify", body: claudeDeny, payload: terminalPayload("ls"),
			want: map[string]any{"action": "modify", "args": map[string]any{"command": "ls -la"}}},
		{name: "hermes action block", body: "#!/bin/bash\ncat >/dev/null\necho '{\"action\":\"block\",\"message\":\"nope\"}'\n",
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": "nope"}},
		{name: "exit 2 blocks with stderr", body: "#!/bin/bash\necho 'dangerous command' >&2\nexit 2\n",
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": "dangerous command"}},
		{name: "exit 2 without stderr", body: "#!/bin/bash\nexit 2\n",
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": DefaultBlockMessage}},
		{name: "exit 2 prefers a stdout block", body: "#!/bin/bash\necho '{\"decision\":\"block\",\"reason\":\"from json\"}'\necho err >&2\nexit 2\n",
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": "from json"}},
		{name: "exit 2 on an observer event blocks nothing", body: "#!/bin/bash\nexit 2\n",
			entry: map[string]any{}, payload: map[string]any{"session_id": "s"}, warn: "exited 2"},
		{name: "non-zero exit fails open", body: "#!/bin/bash\necho boom >&2\nexit 1\n",
			payload: terminalPayload("x"), warn: "exited 1: boom"},
		{name: "non-zero exit fail_closed still needs a block", body: "#!/bin/bash\nexit 1\n",
			entry: map[string]any{"fail_closed": true}, payload: terminalPayload("x"), warn: "exited 1"},
		{name: "non-zero exit can carry a block", body: "#!/bin/bash\necho '{\"decision\":\"block\",\"reason\":\"r\"}'\nexit 3\n",
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": "r"}, warn: "exited 3"},
		{name: "garbage stdout fails open", body: "#!/bin/bash\necho 'Traceback (most recent call last):'\n",
			payload: terminalPayload("x"), warn: "not a JSON object"},
		{name: "garbage stdout fail_closed blocks", body: "#!/bin/bash\necho 'Traceback'\n",
			entry: map[string]any{"fail_closed": true}, payload: terminalPayload("x"),
			want: map[string]any{"action": "block", "message": `hook %CMD% failed closed: printed something that is not a JSON object (expected a directive such as {"decision": "block", "reason": "..."}, or nothing): "Traceback"`},
			warn: "not a JSON object"},
		{name: "missing command fails open", command: "/nonexistent/guard.sh", payload: terminalPayload("x"),
			warn: "command not found: /nonexistent/guard.sh"},
		{name: "missing command fail_closed blocks", command: "/nonexistent/guard.sh", entry: map[string]any{"fail_closed": true},
			payload: terminalPayload("x"), want: map[string]any{"action": "block",
				"message": "hook /nonexistent/guard.sh failed closed: command not found: /nonexistent/guard.sh (give a path that exists, or a program on PATH)"},
			warn: "command not found"},
		{name: "not executable", body: "", command: "%DIR%/plain.txt", payload: terminalPayload("x"), warn: "not executable"},
		{name: "matcher skips other tools", body: "#!/bin/bash\nexit 2\n", entry: map[string]any{"matcher": "patch"},
			payload: terminalPayload("x")},
		{name: "pre_llm_call context", body: "#!/usr/bin/python3\nimport json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({'context':'branch: main, asked: '+d['extra']['user_message']}))\n",
			entry: map[string]any{}, payload: map[string]any{"session_id": "s", "user_message": "hi"},
			want: map[string]any{"context": "branch: main, asked: hi"}},
		{name: "pre_llm_call additionalContext", body: "#!/bin/bash\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"ctx\"}}'\n",
			entry: map[string]any{}, payload: map[string]any{"session_id": "s"}, want: map[string]any{"context": "ctx"}},
		{name: "argv without a shell", command: python + ` -c "import sys,json; print(json.dumps({'decision':'block','reason':'|'.join(sys.argv[1:])}))" 'a b' '$HOME' ';'`,
			payload: terminalPayload("x"), want: map[string]any{"action": "block", "message": "a b|$HOME|;"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			command := tt.command
			if tt.body != "" {
				command = script(t, dir, "hook"+string(rune('a'+i))+".sh", tt.body)
			}
			if strings.Contains(command, "%DIR%") {
				command = strings.ReplaceAll(command, "%DIR%", dir)
				if err := os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("#!/bin/bash\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			event := "pre_tool_call"
			entry := map[string]any{"command": command}
			if tt.entry != nil {
				for k, v := range tt.entry {
					entry[k] = v
				}
				if _, ok := tt.payload["tool_name"]; !ok {
					event = "pre_llm_call"
				}
			}
			h := &Hook{Spec: spec(t, event, entry), Runner: r, Cwd: dir}
			var warned []string
			h.Logger = captureLog(&warned)
			got, _ := h.Fire(context.Background(), tt.payload)
			want := tt.want
			if m, ok := want["message"].(string); ok {
				want = map[string]any{"action": want["action"], "message": strings.ReplaceAll(m, "%CMD%", command)}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("result = %#v, want %#v", got, want)
			}
			switch {
			case tt.warn == "" && len(warned) > 0:
				t.Errorf("warned %q, want no warning", warned)
			case tt.warn != "" && (len(warned) != 1 || !strings.Contains(warned[0], tt.warn)):
				t.Errorf("warned %q, want one warning containing %q", warned, tt.warn)
			}
		})
	}
}

func TestStdinPayload(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stdin.json")
	cmd := script(t, dir, "dump.sh", "#!/bin/bash\ncat > "+out+"\n")
	h := &Hook{Spec: spec(t, "pre_tool_call", map[string]any{"command": cmd}), Runner: &Runner{}, Cwd: "/work/x", Profile: "default"}
	if res, r := h.Fire(context.Background(), terminalPayload("echo hi")); res != nil || r.ExitCode != 0 {
		t.Fatalf("Fire = %v, %+v", res, r)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's key order, checked on the bytes.
	for i, k := range []string{"hook_event_name", "tool_name", "tool_input", "session_id", "cwd", "profile", "extra"} {
		if j := strings.Index(string(raw), `"`+k+`"`); j < 0 {
			t.Fatalf("stdin lacks %s: %s", k, raw)
		} else if i == 0 && j != 1 {
			t.Errorf("stdin does not start with hook_event_name: %s", raw)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"hook_event_name": "pre_tool_call", "tool_name": "terminal", "tool_input": map[string]any{"command": "echo hi"},
		"session_id": "s1", "cwd": "/work/x", "profile": "default",
		"extra": map[string]any{"task_id": "t1", "tool_call_id": "c1", "turn_id": "u1", "api_request_id": "r1",
			"middleware_trace": []any{}, "telemetry_schema_version": "hermes.observer.v1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stdin = %#v\nwant %#v", got, want)
	}
}

// A hook that hangs past its timeout is killed with everything it started,
// and the call fails open (or closed, when it says so).
func TestTimeoutKillsTheHookAndItsChildren(t *testing.T) {
	for _, failClosed := range []bool{false, true} {
		dir := t.TempDir()
		marker := procs.NewMarker()
		// The hook starts a child that leaves its process group, then hangs.
		cmd := script(t, dir, "hang.sh", "#!/bin/bash\nsetsid sleep 300 &\nsleep 300\n")
		rp := reaper.New(reaper.Options{})
		t.Cleanup(rp.Close)
		h := &Hook{Spec: spec(t, "pre_tool_call", map[string]any{"command": cmd, "timeout": 1, "fail_closed": failClosed}),
			Runner: &Runner{Reaper: rp, Environ: []string{"PATH=/usr/bin:/bin", "MARK=" + marker}}}
		var warned []string
		h.Logger = captureLog(&warned)
		start := time.Now()
		got, r := h.Fire(context.Background(), terminalPayload("x"))
		if !r.TimedOut {
			t.Fatalf("result %+v, want a timeout", r)
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("Fire took %s for a 1 s timeout", el)
		}
		procs.NoneMarked(t, marker, 5*time.Second)
		if len(warned) != 1 || !strings.Contains(warned[0], "timed out after 1s and was killed") {
			t.Errorf("warned %q", warned)
		}
		if failClosed {
			want := map[string]any{"action": "block", "message": "hook " + cmd + " failed closed: timed out after 1s and was killed"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fail_closed result = %v, want %v", got, want)
			}
		} else if got != nil {
			t.Errorf("result = %v, want none (fail open)", got)
		}
	}
}

// The caller giving up (an interrupt) kills the hook too, and adds no verdict.
func TestCancelKillsTheHook(t *testing.T) {
	dir := t.TempDir()
	marker := procs.NewMarker()
	cmd := script(t, dir, "hang.sh", "#!/bin/bash\nsleep 300\n")
	h := &Hook{Spec: spec(t, "pre_tool_call", map[string]any{"command": cmd, "fail_closed": true}),
		Runner: &Runner{Environ: []string{"PATH=/usr/bin:/bin", "MARK=" + marker}}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(procs.Marked(marker)) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	got, r := h.Fire(ctx, terminalPayload("x"))
	if !r.Cancelled || got != nil {
		t.Fatalf("Fire = %v, %+v; want cancelled with no result", got, r)
	}
	procs.NoneMarked(t, marker, 5*time.Second)
}

// Huge stdout is read up to MaxStdout and the rest drained, so the hook ends
// normally instead of blocking on a full pipe.
func TestHugeStdout(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "flood.sh", "#!/bin/bash\ncat >/dev/null\nhead -c 50000000 /dev/zero | tr '\\0' x\n")
	h := &Hook{Spec: spec(t, "pre_tool_call", map[string]any{"command": cmd, "fail_closed": true, "timeout": 60}), Runner: &Runner{}}
	var warned []string
	h.Logger = captureLog(&warned)
	got, r := h.Fire(context.Background(), terminalPayload("x"))
	if r.TimedOut || r.ExitCode != 0 || !r.StdoutTruncated || len(r.Stdout) != MaxStdout {
		t.Fatalf("run = exit %d timedOut %v truncated %v len %d", r.ExitCode, r.TimedOut, r.StdoutTruncated, len(r.Stdout))
	}
	if msg, _ := got["message"].(string); got["action"] != "block" || !strings.Contains(msg, "more than 1 MiB on stdout") {
		t.Errorf("result = %v, want a fail-closed block naming the cap", got)
	}
}

func TestAllowlist(t *testing.T) {
	dir := t.TempDir()
	scriptPath := script(t, dir, "guard.sh", "#!/bin/bash\n")
	a := Allowlist{Path: filepath.Join(dir, "home", AllowlistFile), Home: dir}
	ctx := context.Background()
	if list, err := a.Load(); err != nil || len(list) != 0 {
		t.Fatalf("missing file: %v, %v", list, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, p := range [][2]string{{"pre_tool_call", "~/guard.sh"}, {"post_tool_call", "~/guard.sh"}, {"pre_tool_call", "other"}, {"pre_tool_call", "~/guard.sh"}} {
		if err := a.Approve(ctx, p[0], p[1], now); err != nil {
			t.Fatal(err)
		}
	}
	list, err := a.Load()
	if err != nil || len(list) != 3 {
		t.Fatalf("approvals = %+v, %v; want 3 (a re-approval replaces)", list, err)
	}
	ap, ok := Lookup(list, "pre_tool_call", "~/guard.sh")
	fi, _ := os.Stat(scriptPath)
	if !ok || ap.ApprovedAt != "2026-01-02T03:04:05.000000Z" || ap.ScriptMtime != isoUTC(fi.ModTime()) {
		t.Errorf("approval = %+v", ap)
	}
	if _, ok := Lookup(list, "pre_llm_call", "~/guard.sh"); ok {
		t.Error("consent is per (event, command)")
	}
	fi2, err := os.Stat(a.Path)
	if err != nil || fi2.Mode().Perm() != 0o600 {
		t.Errorf("allowlist mode = %v, %v; want 0600", fi2.Mode(), err)
	}
	n, err := a.Revoke(ctx, "~/guard.sh")
	if err != nil || n != 2 {
		t.Fatalf("Revoke = %d, %v; want 2", n, err)
	}
	if list, _ := a.Load(); len(list) != 1 || list[0].Command != "other" {
		t.Errorf("after revoke: %+v", list)
	}

	// Upstream's file, written by Python hermes, reads the same; bad files are errors naming the file.
	for body, want := range map[string]string{
		"\xef\xbb\xbf{\"approvals\": [{\"event\": \"pre_tool_call\", \"command\": \"x\", \"approved_at\": \"2026-01-01T00:00:00Z\"}, 7]}": "",
		"":                  "",
		"{\"approvals\": 3": "is not valid JSON",
		strings.Repeat("[", 100) + strings.Repeat("]", 100): "nests deeper than 8 levels",
	} {
		if err := os.WriteFile(a.Path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := a.Load()
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), a.Path))) {
			t.Errorf("Load(%.30q) err = %v, want %q", body, err, want)
		}
	}
}

// Through the dispatcher: a shell hook registered after a plugin's callback
// comes after it in the results, and concurrent tool calls each get their own run.
func TestThroughTheDispatcher(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "guard.py", claudeGuard)
	d := hooks.New(hooks.Options{Timeout: 30 * time.Second})
	d.Register("pre_tool_call", hooks.Callback{PluginID: "policy", Invoke: func(_ context.Context, p map[string]any) (any, error) {
		if p["tool_name"] == "terminal" && strings.Contains(p["args"].(map[string]any)["command"].(string), "plugin") {
			return map[string]any{"action": "block", "message": "plugin first"}, nil
		}
		return nil, nil
	}})
	h := &Hook{Spec: spec(t, "pre_tool_call", map[string]any{"command": cmd, "matcher": "terminal"}), Runner: &Runner{}}
	d.Register("pre_tool_call", h.Callback())

	res := d.Fire(context.Background(), hooks.HookPreToolCall, terminalPayload("rm -rf plugin"))
	want := []any{map[string]any{"action": "block", "message": "plugin first"},
		map[string]any{"action": "block", "message": "refusing to run: rm -rf plugin"}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("results = %v, want %v", res, want)
	}
	if dir, _ := hooks.PreToolCall(res, nil); dir.Message != "plugin first" {
		t.Errorf("directive = %+v, want the plugin's block", dir)
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := terminalPayload(fmt.Sprintf("rm -rf dir%d", i))
			p["tool_call_id"] = fmt.Sprintf("c%d", i)
			got := d.Fire(context.Background(), hooks.HookPreToolCall, p)
			if len(got) != 1 || got[0].(map[string]any)["message"] != fmt.Sprintf("refusing to run: rm -rf dir%d", i) {
				t.Errorf("call %d: %v", i, got)
			}
		}()
	}
	wg.Wait()
}
