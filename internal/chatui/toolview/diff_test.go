package toolview

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/internal/tools/builtin"
)

func argsJSON(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type diffCase struct {
	name   string
	tool   string
	before *string // the file before the call; nil: it does not exist
	args   map[string]any
	width  int
	ok     bool
}

func str(s string) *string { return &s }

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

var goFile = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"

var diffCases = []diffCase{
	{"write_new_file", "write_file", nil, map[string]any{"path": "hello.txt", "content": "one\ntwo\nthree\n"}, 80, true},
	{"write_modify", "write_file", str(goFile), map[string]any{"path": "main.go", "content": strings.Replace(goFile, `"hello"`, `"hello, world"`, 1)}, 80, true},
	{"write_same", "write_file", str("same\n"), map[string]any{"path": "s.txt", "content": "same\n"}, 80, true},
	{"write_no_final_newline", "write_file", str("a\nb"), map[string]any{"path": "n.txt", "content": "a\nc"}, 80, true},
	{"write_capped", "write_file", nil, map[string]any{"path": "big.txt", "content": numbered(300)}, 80, true},
	{"write_escapes", "write_file", str("plain\n"), map[string]any{"path": "e\x1b[2J.txt", "content": "plain\n" + evil + "\n"}, 80, true},
	{"write_binary", "write_file", str("\x00\x01\x02 old"), map[string]any{"path": "b.bin", "content": "text now\n"}, 80, true},
	{"write_missing_content", "write_file", nil, map[string]any{"path": "x.txt"}, 80, false},
	{"patch_replace", "patch", str(goFile), map[string]any{"path": "main.go", "old_string": `fmt.Println("hello")`, "new_string": "fmt.Println(\"hi\")\n\tfmt.Println(\"bye\")"}, 80, true},
	{"patch_replace_all", "patch", str("a x\nb\nc x\n" + numbered(10) + "x end\n"), map[string]any{"path": "r.txt", "old_string": "x", "new_string": "y", "replace_all": true}, 80, true},
	{"patch_crlf", "patch", str("one\r\ntwo\r\nthree\r\n"), map[string]any{"path": "w.txt", "old_string": "two\nthree", "new_string": "2\n3"}, 80, true},
	{"patch_at_40_columns", "patch", str("short\n" + strings.Repeat("long ", 20) + "\nend\n"), map[string]any{"path": "l.txt", "old_string": "end", "new_string": "fin — 終わり"}, 40, true},
	{"patch_no_match", "patch", str(goFile), map[string]any{"path": "main.go", "old_string": "nothing like this", "new_string": "x"}, 80, false},
	{"patch_ambiguous", "patch", str("x\nx\n"), map[string]any{"path": "a.txt", "old_string": "x", "new_string": "y"}, 80, false},
	{"patch_mode_patch", "patch", str(goFile), map[string]any{"path": "main.go", "mode": "patch", "old_string": "main", "new_string": "x"}, 80, false},
	{"patch_missing_file", "patch", nil, map[string]any{"path": "gone.txt", "old_string": "a", "new_string": "b"}, 80, false},
	{"other_tool", "read_file", str("x\n"), map[string]any{"path": "x.txt"}, 80, false},
}

// Diff shows what write_file and patch will do, computed before the tool runs,
// from the file as it is; golden files hold each rendering, with and without
// colour.
func TestDiff(t *testing.T) {
	for _, tt := range diffCases {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, _ := tt.args["path"].(string)
			if tt.before != nil {
				if err := os.WriteFile(filepath.Join(dir, path), []byte(*tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }
			args := argsJSON(t, tt.args)
			var plain string
			out := both(func(color bool) string {
				d, ok := Diff(tt.tool, args, read, tt.width, color)
				if ok != tt.ok {
					t.Fatalf("ok = %v, want %v (diff %q)", ok, tt.ok, d)
				}
				checkSafe(t, d, tt.width, color)
				if !color {
					plain = d
				}
				return d
			})
			if !tt.ok {
				return
			}
			if strings.Count(plain, "\n") > diffMaxLines {
				t.Errorf("diff has %d lines, more than the cap of %d", strings.Count(plain, "\n")+1, diffMaxLines)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// What Diff predicts is what the built-in tool then does: for every case, the
// real write_file or patch runs on the same file, and it succeeds exactly when
// Diff gave a diff, leaving the content Diff compared against.
func TestDiffPredictsTheTool(t *testing.T) {
	for _, tt := range diffCases {
		if tt.tool != builtin.WriteFile && tt.tool != builtin.Patch || strings.Contains(tt.name, "escapes") {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.args["path"].(string)
			abs := filepath.Join(dir, path)
			before := ""
			if tt.before != nil {
				before = *tt.before
				if err := os.WriteFile(abs, []byte(before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var want string
			ok := false
			switch tt.tool {
			case builtin.WriteFile:
				want, ok = tt.args["content"].(string)
			case builtin.Patch:
				if tt.before != nil {
					want, ok = patched(before, tt.args)
				}
			}
			if _, diffOK := Diff(tt.tool, argsJSON(t, tt.args), func(p string) ([]byte, error) {
				return os.ReadFile(filepath.Join(dir, p))
			}, 80, false); diffOK != ok {
				t.Fatalf("Diff ok = %v, but the predicted content is ok = %v", diffOK, ok)
			}

			reg := tools.NewRegistry()
			if err := builtin.Register(reg, builtin.Options{WorkDir: dir, Environ: os.Environ()}); err != nil {
				t.Fatal(err)
			}
			p := &tools.Pipeline{Registry: reg}
			res := p.Run(context.Background(), tools.Call{Name: tt.tool, Args: tt.args, TaskID: "t", ToolCallID: "c"})
			failed := res.Status != tools.StatusOK || strings.Contains(res.Result, `"error"`)
			if failed == ok {
				t.Fatalf("Diff ok = %v, but the tool's result was %s %s", ok, res.Status, res.Result)
			}
			if !ok {
				return
			}
			got, err := os.ReadFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("the tool wrote %q, Diff showed the change to %q", got, want)
			}
		})
	}
}

// FileReader finds files as the built-in tools do: relative paths under the
// work directory, ~/ under home, absolute ones as they are.
func TestFileReader(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	for path, content := range map[string]string{filepath.Join(work, "rel.txt"): "work", filepath.Join(home, "h.txt"): "home"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := FileReader(work, home)
	for path, want := range map[string]string{"rel.txt": "work", "./sub/../rel.txt": "work", "~/h.txt": "home", filepath.Join(home, "h.txt"): "home"} {
		got, err := read(path)
		if err != nil || string(got) != want {
			t.Errorf("read(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := read("missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file gives %v, want fs.ErrNotExist (Diff shows it as new)", err)
	}
}
