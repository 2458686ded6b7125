package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/testutil/procs"
	"github.com/hermes-go/hermes/internal/tools"
)

func newPipeline(t *testing.T, opts Options) *tools.Pipeline {
	t.Helper()
	reg := tools.NewRegistry()
	if opts.Environ == nil {
		opts.Environ = os.Environ() // terminal commands inherit hermes' environment
	}
	if err := Register(reg, opts); err != nil {
		t.Fatal(err)
	}
	return &tools.Pipeline{Registry: reg}
}

// call runs one tool call through the real pipeline (schema validation included)
// and decodes its JSON result.
func call(t *testing.T, p *tools.Pipeline, name string, args map[string]any) (map[string]any, tools.Outcome) {
	t.Helper()
	return callCtx(context.Background(), t, p, name, args)
}

func callCtx(ctx context.Context, t *testing.T, p *tools.Pipeline, name string, args map[string]any) (map[string]any, tools.Outcome) {
	t.Helper()
	out := p.Run(ctx, tools.Call{Name: name, Args: args, TaskID: "test", ToolCallID: "call_1"})
	var m map[string]any
	if err := json.Unmarshal([]byte(out.Result), &m); err != nil {
		t.Fatalf("%s result is not a JSON object: %v\n%s", name, err, out.Result)
	}
	return m, out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRegister(t *testing.T) {
	reg := tools.NewRegistry()
	if err := Register(reg, Options{WorkDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ReadFile: "file", WriteFile: "file", Patch: "file", SearchFiles: "file", Terminal: "terminal"}
	for name, toolset := range want {
		tool, ok := reg.Get(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if tool.Source != tools.SourceBuiltin || tool.Toolset != toolset || tool.SchemaProblem() != "" || tool.Schema["name"] != name {
			t.Errorf("%s: source %q toolset %q schema problem %q", name, tool.Source, tool.Toolset, tool.SchemaProblem())
		}
	}
	if len(reg.List()) != len(want) {
		t.Fatalf("registered %d tools, want %d", len(reg.List()), len(want))
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\ngamma\n")
	write(t, filepath.Join(dir, "crlf.txt"), "one\r\ntwo\r\n")
	write(t, filepath.Join(dir, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	var big strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&big, "%05d %s\n", i, strings.Repeat("x", 94))
	}
	write(t, filepath.Join(dir, "big.txt"), big.String())
	write(t, filepath.Join(dir, "long.txt"), strings.Repeat("y", 50_000)+"\nshort\n")
	write(t, filepath.Join(dir, ".env"), "OPENAI_API_KEY=sk-secret\n")
	p := newPipeline(t, Options{WorkDir: dir, SecretPaths: []string{filepath.Join(dir, ".env")}})

	cases := []struct {
		name    string
		args    map[string]any
		content string // expected content ("" = skip)
		wantErr string // substring of the error ("" = success)
		check   func(t *testing.T, m map[string]any)
	}{
		{name: "whole file", args: map[string]any{"path": "notes.txt"}, content: "1|alpha\n2|beta\n3|gamma",
			check: func(t *testing.T, m map[string]any) {
				if m["total_lines"] != 3.0 || m["truncated"] != false || m["file_size"] != 17.0 {
					t.Errorf("got %v", m)
				}
			}},
		{name: "absolute path", args: map[string]any{"path": filepath.Join(dir, "notes.txt"), "offset": 2, "limit": 1}, content: "2|beta",
			check: func(t *testing.T, m map[string]any) {
				if m["truncated"] != true || !strings.Contains(m["hint"].(string), "offset=3") {
					t.Errorf("got %v", m)
				}
			}},
		{name: "crlf stripped", args: map[string]any{"path": "crlf.txt"}, content: "1|one\n2|two"},
		{name: "offset past end", args: map[string]any{"path": "notes.txt", "offset": 10}, content: "",
			check: func(t *testing.T, m map[string]any) {
				if !strings.Contains(m["hint"].(string), "past the end") {
					t.Errorf("got %v", m)
				}
			}},
		{name: "huge file capped", args: map[string]any{"path": "big.txt", "limit": 2000},
			check: func(t *testing.T, m map[string]any) {
				c := m["content"].(string)
				if len(c) > MaxReadChars || m["truncated"] != true || m["total_lines"] != 3000.0 {
					t.Errorf("len %d truncated %v total %v", len(c), m["truncated"], m["total_lines"])
				}
				if !strings.Contains(m["hint"].(string), "offset=") {
					t.Errorf("hint %v", m["hint"])
				}
			}},
		{name: "long line clamped", args: map[string]any{"path": "long.txt"},
			check: func(t *testing.T, m map[string]any) {
				c := m["content"].(string)
				if !strings.Contains(c, "... [truncated]\n2|short") || len(c) > 2100 {
					t.Errorf("content length %d: %.80q", len(c), c)
				}
			}},
		{name: "missing file", args: map[string]any{"path": "note.txt"}, wantErr: "File not found: note.txt (similar: "},
		{name: "binary file", args: map[string]any{"path": "image.png"}, wantErr: "Binary file"},
		{name: "directory", args: map[string]any{"path": "."}, wantErr: "is a directory"},
		{name: "device", args: map[string]any{"path": "/dev/zero"}, wantErr: "not a regular file"},
		{name: "missing path", args: map[string]any{}, wantErr: "path"},
		{name: "secret file", args: map[string]any{"path": ".env"}, wantErr: "holds secrets"},
		{name: "bad limit", args: map[string]any{"path": "notes.txt", "limit": "many"}, wantErr: "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, out := call(t, p, ReadFile, c.args)
			if c.wantErr != "" {
				if out.Status != "error" || !strings.Contains(fmt.Sprint(m["error"]), c.wantErr) {
					t.Fatalf("status %s, result %s; want error containing %q", out.Status, out.Result, c.wantErr)
				}
				return
			}
			if out.Status != "ok" {
				t.Fatalf("status %s: %s", out.Status, out.Result)
			}
			if c.content != "" && m["content"] != c.content {
				t.Fatalf("content = %q, want %q", m["content"], c.content)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

type writeCase struct {
	name    string
	args    map[string]any
	wantErr string
	file    string // path to check afterwards
	want    string
	created bool
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	protected := filepath.Join(dir, "hermes", "config.yaml")
	p := newPipeline(t, Options{WorkDir: dir, ProtectedPaths: []string{protected}})
	write(t, filepath.Join(dir, "script.sh"), "old")
	if err := os.Chmod(filepath.Join(dir, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []writeCase{
		{name: "creates parents", args: map[string]any{"path": "a/b/c.txt", "content": "hello\n"}, file: "a/b/c.txt", want: "hello\n", created: true},
		{name: "overwrites keeping mode", args: map[string]any{"path": "script.sh", "content": "#!/bin/sh\necho new\n"}, file: "script.sh", want: "#!/bin/sh\necho new\n"},
		{name: "empty content", args: map[string]any{"path": "empty.txt", "content": ""}, file: "empty.txt", want: ""},
		{name: "missing content", args: map[string]any{"path": "x.txt"}, wantErr: "content"},
		{name: "content not a string", args: map[string]any{"path": "x.txt", "content": 12}, wantErr: "content"},
		{name: "directory", args: map[string]any{"path": "a", "content": "x"}, wantErr: "is a directory"},
		{name: "system path", args: map[string]any{"path": "/etc/hermes-test-never", "content": "x"}, wantErr: "system path"},
		{name: "ssh keys", args: map[string]any{"path": "~/.ssh/authorized_keys", "content": "x"}, wantErr: "credentials"},
		{name: "protected config", args: map[string]any{"path": protected, "content": "x"}, wantErr: "protected"},
	}
	// Links are followed: the protected-path check sees where a write would land.
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(dir, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(protected, filepath.Join(dir, "cfg-link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "real.txt"), "before")
	if err := os.Symlink("real.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	cases = append(cases,
		writeCase{name: "through a dir link to ~/.ssh", args: map[string]any{"path": "keys/authorized_keys", "content": "x"}, wantErr: "credentials"},
		writeCase{name: "through a file link to config", args: map[string]any{"path": "cfg-link", "content": "x"}, wantErr: "protected"},
		writeCase{name: "link target written", args: map[string]any{"path": "alias.txt", "content": "after"}, file: "real.txt", want: "after"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, out := call(t, p, WriteFile, c.args)
			if c.wantErr != "" {
				if out.Status != "error" || !strings.Contains(fmt.Sprint(m["error"]), c.wantErr) {
					t.Fatalf("status %s result %s, want error with %q", out.Status, out.Result, c.wantErr)
				}
				return
			}
			if out.Status != "ok" || m["bytes_written"] != float64(len(c.want)) || m["dirs_created"] != c.created {
				t.Fatalf("status %s result %s", out.Status, out.Result)
			}
			got, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil || string(got) != c.want {
				t.Fatalf("file = %q, %v", got, err)
			}
		})
	}
	if st, _ := os.Stat(filepath.Join(dir, "script.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755 kept", st.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh")); err == nil {
		t.Errorf("~/.ssh was created")
	}
}

func TestPatch(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		args    map[string]any
		want    string // file afterwards
		wantErr string
		diff    string // substring of the diff
	}{
		{name: "unique", file: "a\nfoo()\nb\n", args: map[string]any{"old_string": "foo()", "new_string": "bar()"}, want: "a\nbar()\nb\n", diff: "-foo()\n+bar()\n"},
		{name: "multi-line", file: "x\n  if a:\n    pass\ny\n", args: map[string]any{"mode": "replace", "old_string": "  if a:\n    pass\n", "new_string": "  if b:\n    return\n"}, want: "x\n  if b:\n    return\ny\n", diff: "@@ -1,4 +1,4 @@"},
		{name: "delete text", file: "keep\ndrop\n", args: map[string]any{"old_string": "drop\n", "new_string": ""}, want: "keep\n", diff: "-drop\n"},
		{name: "replace all", file: "x x x\n", args: map[string]any{"old_string": "x", "new_string": "y", "replace_all": true}, want: "y y y\n"},
		{name: "crlf file", file: "one\r\ntwo\r\n", args: map[string]any{"old_string": "one\ntwo", "new_string": "1\n2"}, want: "1\r\n2\r\n"},
		{name: "missing match", file: "abc\n", args: map[string]any{"old_string": "xyz", "new_string": "q"}, want: "abc\n", wantErr: "Could not find old_string"},
		{name: "whitespace differs", file: "\tindented\n", args: map[string]any{"old_string": "    indented", "new_string": "q"}, want: "\tindented\n", wantErr: "whitespace"},
		{name: "ambiguous", file: "dup\ndup\n", args: map[string]any{"old_string": "dup", "new_string": "one"}, want: "dup\ndup\n", wantErr: "matches 2 times"},
		{name: "identical", file: "a\n", args: map[string]any{"old_string": "a", "new_string": "a"}, want: "a\n", wantErr: "identical"},
		{name: "empty old", file: "a\n", args: map[string]any{"old_string": "", "new_string": "b"}, want: "a\n", wantErr: "empty"},
		{name: "v4a mode", file: "a\n", args: map[string]any{"mode": "patch", "old_string": "a", "new_string": "b"}, want: "a\n", wantErr: "not supported"},
		{name: "missing new_string", file: "a\n", args: map[string]any{"old_string": "a"}, want: "a\n", wantErr: "new_string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			write(t, path, c.file)
			p := newPipeline(t, Options{WorkDir: dir})
			args := map[string]any{"path": "f.txt"}
			for k, v := range c.args {
				args[k] = v
			}
			m, out := call(t, p, Patch, args)
			got, _ := os.ReadFile(path)
			if string(got) != c.want {
				t.Fatalf("file = %q, want %q (result %s)", got, c.want, out.Result)
			}
			if c.wantErr != "" {
				if out.Status != "error" || !strings.Contains(fmt.Sprint(m["error"]), c.wantErr) {
					t.Fatalf("result %s, want error with %q", out.Result, c.wantErr)
				}
				return
			}
			if out.Status != "ok" || m["success"] != true {
				t.Fatalf("result %s", out.Result)
			}
			if !strings.Contains(m["diff"].(string), c.diff) {
				t.Fatalf("diff %q lacks %q", m["diff"], c.diff)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		p := newPipeline(t, Options{WorkDir: t.TempDir()})
		m, out := call(t, p, Patch, map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"})
		if out.Status != "error" || !strings.Contains(m["error"].(string), "File not found") {
			t.Fatalf("result %s", out.Result)
		}
	})
}

func TestSearchFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "main.go"), "package main\nfunc main() {\n\tTODO()\n}\n")
	write(t, filepath.Join(dir, "pkg/util.go"), "package pkg\n// TODO: more\nfunc TODO() {}\n")
	write(t, filepath.Join(dir, "README.md"), "TODO: write docs\n")
	write(t, filepath.Join(dir, ".git/config"), "TODO in git\n")
	write(t, filepath.Join(dir, "node_modules/x/index.js"), "TODO in deps\n")
	write(t, filepath.Join(dir, "blob.bin"), "TODO\x00\x01binary")
	write(t, filepath.Join(dir, ".env"), "TODO=sk-secret\n")
	for i := 0; i < 30; i++ {
		write(t, filepath.Join(dir, "many", fmt.Sprintf("f%02d.txt", i)), "needle\nneedle\n")
	}
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(filepath.Join(dir, "main.go"), old, old)
	p := newPipeline(t, Options{WorkDir: dir, SecretPaths: []string{filepath.Join(dir, ".env")}})

	t.Run("content with glob", func(t *testing.T) {
		m, out := call(t, p, SearchFiles, map[string]any{"pattern": `TODO\(`, "file_glob": "*.go"})
		if out.Status != "ok" || m["total_count"] != 2.0 {
			t.Fatalf("result %s", out.Result)
		}
		mt := m["matches"].([]any)[0].(map[string]any)
		if mt["path"] != "main.go" || mt["line"] != 3.0 || mt["content"] != "\tTODO()" {
			t.Fatalf("match %v", mt)
		}
	})
	t.Run("skips git, deps and binaries", func(t *testing.T) {
		m, _ := call(t, p, SearchFiles, map[string]any{"pattern": "TODO", "output_mode": "files_only"})
		got := fmt.Sprint(m["files"])
		if got != "[README.md main.go pkg/util.go]" {
			t.Fatalf("files = %s", got)
		}
	})
	t.Run("limit and truncation", func(t *testing.T) {
		m, _ := call(t, p, SearchFiles, map[string]any{"pattern": "needle", "limit": 5, "path": "many"})
		if m["total_count"] != 60.0 || len(m["matches"].([]any)) != 5 || m["truncated"] != true || !strings.Contains(m["hint"].(string), "offset=5") {
			t.Fatalf("result %v", m)
		}
		first := m["matches"].([]any)[0].(map[string]any)
		if first["path"] != filepath.Join("many", "f00.txt") {
			t.Fatalf("first match %v", first)
		}
		m, _ = call(t, p, SearchFiles, map[string]any{"pattern": "needle", "limit": 5, "offset": 58, "path": "many"})
		if len(m["matches"].([]any)) != 2 || m["truncated"] != nil {
			t.Fatalf("last page %v", m)
		}
	})
	t.Run("count", func(t *testing.T) {
		m, _ := call(t, p, SearchFiles, map[string]any{"pattern": "TODO", "output_mode": "count"})
		counts := m["counts"].(map[string]any)
		if counts["pkg/util.go"] != 2.0 || m["total_count"] != 4.0 {
			t.Fatalf("counts %v", m)
		}
	})
	t.Run("files newest first", func(t *testing.T) {
		m, _ := call(t, p, SearchFiles, map[string]any{"pattern": "*.go", "target": "files"})
		files := m["files"].([]any)
		if len(files) != 2 || files[1] != "main.go" {
			t.Fatalf("files %v", files)
		}
	})
	t.Run("find alias", func(t *testing.T) {
		m, _ := call(t, p, SearchFiles, map[string]any{"pattern": "README*", "target": "find"})
		if fmt.Sprint(m["files"]) != "[README.md]" {
			t.Fatalf("files %v", m)
		}
	})
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"bad regex", map[string]any{"pattern": "(?<=x)y"}, "invalid regex"},
		{"bad target", map[string]any{"pattern": "x", "target": "dirs"}, "target"},
		{"bad glob", map[string]any{"pattern": "x", "file_glob": "[x"}, "file_glob"},
		{"missing path", map[string]any{"pattern": "x", "path": "nowhere"}, "does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, out := call(t, p, SearchFiles, c.args)
			if out.Status != "error" || !strings.Contains(fmt.Sprint(m["error"]), c.want) {
				t.Fatalf("result %s, want error with %q", out.Result, c.want)
			}
		})
	}
}

type scriptedApprover struct {
	answer approval.Choice
	asked  []approval.CommandRequest
}

func (s *scriptedApprover) Approve(context.Context, tools.ApprovalRequest) (approval.Choice, error) {
	return s.answer, nil
}

func (s *scriptedApprover) ApproveCommand(_ context.Context, r approval.CommandRequest) (approval.Choice, error) {
	s.asked = append(s.asked, r)
	return s.answer, nil
}

func TestTerminal(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, Options{WorkDir: dir, OutputCap: 1000})
	cases := []struct {
		name   string
		args   map[string]any
		output string
		exit   float64
		err    string
	}{
		{"echo", map[string]any{"command": "echo hi"}, "hi\n", 0, ""},
		{"stderr merged and exit code", map[string]any{"command": "echo out; echo err >&2; exit 3"}, "out\nerr\n", 3, ""},
		{"working dir", map[string]any{"command": "pwd"}, dir + "\n", 0, ""},
		{"workdir argument", map[string]any{"command": "pwd", "workdir": "sub"}, filepath.Join(dir, "sub") + "\n", 0, ""},
		{"pipes and quotes", map[string]any{"command": `printf '%s\n' "a b" c | wc -l`}, "2\n", 0, ""},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, "done\n", 0, ""},
		{"killed by signal", map[string]any{"command": "kill -TERM $$"}, "", 143, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, out := call(t, p, Terminal, c.args)
			if out.Status != "ok" || m["output"] != c.output || m["exit_code"] != c.exit || m["error"] != nil {
				t.Fatalf("result %s", out.Result)
			}
		})
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty command", map[string]any{"command": "  "}, "empty"},
		{"timeout too long", map[string]any{"command": "true", "timeout": 601}, "maximum"},
		{"bad workdir", map[string]any{"command": "true", "workdir": "nope"}, "workdir"},
		{"command not a string", map[string]any{"command": []any{"ls"}}, "command"},
		{"background", map[string]any{"command": "sleep 1", "background": true}, "background=true is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, out := call(t, p, Terminal, c.args)
			if out.Status != "error" || !strings.Contains(fmt.Sprint(m["error"]), c.want) {
				t.Fatalf("result %s, want error with %q", out.Result, c.want)
			}
		})
	}
}

func TestTerminalOutputCap(t *testing.T) {
	p := newPipeline(t, Options{WorkDir: t.TempDir(), OutputCap: 1000})
	m, _ := call(t, p, Terminal, map[string]any{"command": "seq 1 100000"})
	out := m["output"].(string)
	if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n") {
		t.Fatalf("head/tail lost: %.40q ... %.40q", out, out[len(out)-40:])
	}
	if !strings.Contains(out, "[OUTPUT TRUNCATED - ") || len(out) > 1200 {
		t.Fatalf("len %d, marker missing: %q", len(out), out)
	}
	if m["exit_code"] != 0.0 {
		t.Fatalf("exit %v", m["exit_code"])
	}
}

func TestTerminalTimeoutKillsProcessGroup(t *testing.T) {
	marker := procs.NewMarker()
	p := newPipeline(t, Options{WorkDir: t.TempDir(), Env: []string{"HERMES_TEST_MARKER=" + marker}})
	start := time.Now()
	// A background child, a grandchild in a subshell, and a foreground sleep: all in
	// the command's process group, all must die.
	m, out := call(t, p, Terminal, map[string]any{"command": "sleep 300 & (sleep 300 &); echo started; sleep 300", "timeout": 1})
	if out.Status != "ok" || m["exit_code"] != 124.0 || !strings.Contains(m["error"].(string), "timed out after 1s") || m["output"] != "started\n" {
		t.Fatalf("result %s", out.Result)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("timeout did not stop the command")
	}
	procs.NoneMarked(t, marker, 5*time.Second)
}

func TestTerminalBackgroundChildrenDoNotOutliveTheCall(t *testing.T) {
	marker := procs.NewMarker()
	p := newPipeline(t, Options{WorkDir: t.TempDir(), Env: []string{"HERMES_TEST_MARKER=" + marker}})
	m, out := call(t, p, Terminal, map[string]any{"command": "sleep 300 & echo bg"})
	if out.Status != "ok" || m["exit_code"] != 0.0 || m["output"] != "bg\n" {
		t.Fatalf("result %s", out.Result)
	}
	procs.NoneMarked(t, marker, 5*time.Second)
}

func TestTerminalCancel(t *testing.T) {
	marker := procs.NewMarker()
	p := newPipeline(t, Options{WorkDir: t.TempDir(), Env: []string{"HERMES_TEST_MARKER=" + marker}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan map[string]any)
	go func() {
		m, _ := callCtx(ctx, t, p, Terminal, map[string]any{"command": "trap '' TERM; sleep 300 & sleep 300"})
		done <- m
	}()
	// Wait until the command is really running before interrupting it.
	deadline := time.Now().Add(10 * time.Second)
	for len(procs.Marked(marker)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	m := <-done
	if m["exit_code"] != 130.0 || !strings.Contains(m["error"].(string), "interrupted") {
		t.Fatalf("result %v", m)
	}
	procs.NoneMarked(t, marker, 5*time.Second)
}

func TestTerminalGuard(t *testing.T) {
	cases := []struct {
		name     string
		approver *scriptedApprover
		guard    *approval.Guard
		command  string
		ran      bool   // did the command run (it creates ran.txt)
		blocked  string // substring of the refusal
		asked    bool
	}{
		{name: "safe runs", command: "touch ran.txt", ran: true},
		{name: "hardline never runs even if approved", approver: &scriptedApprover{answer: "always"}, command: "touch ran.txt; mkfs.ext4 /dev/sdz9", blocked: "BLOCKED (hardline): format filesystem (mkfs)"},
		{name: "hardline in bash -c", command: `touch ran.txt && bash -c "dd if=/dev/zero of=/dev/sdz9 count=0"`, blocked: "dd to raw block device"},
		{name: "dangerous without approver", command: "touch ran.txt; rm -rf ./build", blocked: `add "recursive delete" to command_allowlist`},
		{name: "dangerous approved once", approver: &scriptedApprover{answer: "once"}, command: "touch ran.txt; rm -rf ./build", ran: true, asked: true},
		{name: "dangerous denied", approver: &scriptedApprover{answer: "deny"}, command: "touch ran.txt; rm -rf ./build", blocked: "the user denied this command (recursive delete)", asked: true},
		{name: "allowlisted runs unasked", approver: &scriptedApprover{answer: "deny"}, guard: &approval.Guard{Allow: []string{approval.KeyRecursiveDelete}}, command: "touch ran.txt; rm -rf ./build", ran: true},
		{name: "user deny rule", approver: &scriptedApprover{answer: "always"}, guard: &approval.Guard{Deny: []string{"touch *"}}, command: "touch ran.txt", blocked: "deny rule 'touch *'"},
		{name: "quoted text is data", command: `echo "rm -rf /" > ran.txt`, ran: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "build"), 0o755); err != nil {
				t.Fatal(err)
			}
			opts := Options{WorkDir: dir, Guard: c.guard}
			if c.approver != nil {
				opts.Approver = c.approver
			}
			p := newPipeline(t, opts)
			m, out := call(t, p, Terminal, map[string]any{"command": c.command})
			_, err := os.Stat(filepath.Join(dir, "ran.txt"))
			if ran := err == nil; ran != c.ran {
				t.Fatalf("ran = %v, want %v (result %s)", ran, c.ran, out.Result)
			}
			if c.blocked != "" {
				if m["status"] != "blocked" || m["exit_code"] != -1.0 || !strings.Contains(m["error"].(string), c.blocked) {
					t.Fatalf("result %s, want blocked with %q", out.Result, c.blocked)
				}
			}
			if c.approver != nil && (len(c.approver.asked) > 0) != c.asked {
				t.Fatalf("asked = %v, want %v", c.approver.asked, c.asked)
			}
			if c.asked && c.ran && !strings.Contains(m["approval"].(string), "approved by the user") {
				t.Fatalf("no approval note: %s", out.Result)
			}
		})
	}
}

func TestTerminalTransformOutput(t *testing.T) {
	type seen struct {
		command, output string
		exit            int
	}
	var got []seen
	p := newPipeline(t, Options{WorkDir: t.TempDir(), OutputCap: 100, TransformOutput: func(_ context.Context, command, output string, exit int) string {
		got = append(got, seen{command, output, exit})
		return strings.ToUpper(output) + strings.Repeat("z", 500)
	}})
	m, _ := call(t, p, Terminal, map[string]any{"command": "echo secret; exit 2"})
	if len(got) != 1 || got[0] != (seen{"echo secret; exit 2", "secret\n", 2}) {
		t.Fatalf("hook saw %+v", got)
	}
	out := m["output"].(string)
	if !strings.HasPrefix(out, "SECRET\n") || !strings.Contains(out, "OUTPUT TRUNCATED") {
		t.Fatalf("the hook's output must replace the output, then be capped: %q", out)
	}
}

func TestHeadTail(t *testing.T) {
	cases := []struct {
		n      int
		writes []string
		want   string
	}{
		{4, []string{"abc"}, "abc"},
		{4, []string{"abcdefgh"}, "abcdefgh"},
		{2, []string{"ab", "cd", "ef", "gh"}, "ab" + truncationMarker(4, 8) + "gh"},
		{3, []string{"0123456789"}, "012" + truncationMarker(4, 10) + "789"},
	}
	for _, c := range cases {
		h := newHeadTail(c.n)
		for _, w := range c.writes {
			_, _ = h.Write([]byte(w))
		}
		if got := h.String(); got != c.want {
			t.Errorf("headTail(%d, %q) = %q, want %q", c.n, c.writes, got, c.want)
		}
	}
}

func TestEncodeMatchesUpstreamJSON(t *testing.T) {
	got := encode(obj{{"output", "<a> & é"}, {"exit_code", 0}, {"error", nil}, {"files", []string{"x"}}, {"m", []obj{{{"k", 1}}}}})
	want := `{"output": "<a> & é", "exit_code": 0, "error": null, "files": ["x"], "m": [{"k": 1}]}`
	if got != want {
		t.Fatalf("encode = %s\nwant     %s", got, want)
	}
}
