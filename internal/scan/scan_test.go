package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func scanDir(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := Scan(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func findings(res *Result, id string) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.PatternID == id {
			out = append(out, f)
		}
	}
	return out
}

func TestNonexistentPath(t *testing.T) {
	_, err := Scan(context.Background(), filepath.Join(t.TempDir(), "nope"), Options{})
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Fatalf("want a clear error for a missing path, got %v", err)
	}
}

func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.py"), []byte("x = 1\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, dir, Options{}); err == nil {
		t.Fatal("a cancelled scan must fail")
	}
}

func TestSingleFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.sh")
	write(t, p, []byte("rm -rf /\n"))
	res, err := Scan(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictDangerous || len(findings(res, "destructive_root_rm")) != 1 {
		t.Fatalf("single file: %s", res.Report())
	}
}

func TestExcludedDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"} {
		write(t, filepath.Join(dir, d, "x.sh"), []byte("rm -rf /\n"))
	}
	write(t, filepath.Join(dir, "src", "node_modules", "y.js"), []byte("rm -rf /\n"))
	if res := scanDir(t, dir); len(res.Findings) != 0 {
		t.Fatalf("excluded dirs were scanned:\n%s", res.Report())
	}
}

func TestStructural(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < maxFileCount+1; i++ {
		write(t, filepath.Join(dir, "many", strings.Repeat("f", 1+i%7)+string(rune('a'+i%26))+"_"+strconv.Itoa(i)+".txt"), []byte("ok\n"))
	}
	// Sparse: big by size, cheap to make; not a scannable type, so never read.
	big := filepath.Join(dir, "blob.dat")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate((maxTotalSizeKB + 1) * 1024); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := scanDir(t, dir)
	for id, sev := range map[string]string{"too_many_files": sevMedium, "oversized_bundle": sevMedium,
		"oversized_file": sevMedium, "binary_file": sevHigh} {
		fs := findings(res, id)
		if len(fs) != 1 || fs[0].Severity != sev {
			t.Errorf("%s: got %+v", id, fs)
		}
	}
	if res.Verdict != VerdictCaution {
		t.Errorf("verdict %s, want caution (binary_file is high for plugins)", res.Verdict)
	}
}

func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "real.py"), []byte("x = 1\n"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("real.py", filepath.Join(dir, "inside.py")))
	must(os.Symlink("/etc/hostname", filepath.Join(dir, "escape.txt")))
	must(os.Symlink("../../../../outside-missing", filepath.Join(dir, "escape-dangling")))
	must(os.Symlink("missing.py", filepath.Join(dir, "dangling.py")))
	must(os.Symlink("loop-b", filepath.Join(dir, "loop-a")))
	must(os.Symlink("loop-a", filepath.Join(dir, "loop-b")))
	must(os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(os.Symlink("..", filepath.Join(dir, "sub", "up"))) // a directory loop: never followed
	res := scanDir(t, dir)
	esc := findings(res, "symlink_escape")
	if len(esc) != 2 || esc[0].Severity != sevCritical {
		t.Errorf("symlink_escape: %+v", esc)
	}
	broken := findings(res, "broken_symlink")
	if len(broken) != 3 {
		t.Errorf("broken_symlink (dangling + two loop links): %+v", broken)
	}
	if res.Verdict != VerdictDangerous {
		t.Errorf("verdict %s", res.Verdict)
	}
}

func TestFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.py"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	scanDir(t, dir)
	// Opened without blocking and checked to be regular, even if it turns up late.
	fsc := newFileScanner(Options{})
	if fs := fsc.scanPath(fileJob{abs: filepath.Join(dir, "pipe.py"), rel: "pipe.py"}); len(fs) != 0 {
		t.Fatalf("a FIFO is no file to scan: %+v", fs)
	}
}

func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	// A file that vanished (or cannot be opened) between the walk and the read.
	fsc := newFileScanner(Options{})
	fs := fsc.scanPath(fileJob{abs: filepath.Join(dir, "gone.py"), rel: "gone.py"})
	if len(fs) != 1 || fs[0].PatternID != "unreadable_file" {
		t.Fatalf("vanished file: %+v", fs)
	}
	if os.Geteuid() == 0 {
		return // root reads mode-000 files
	}
	write(t, filepath.Join(dir, "secret.py"), []byte("os.system('x')\n"))
	if err := os.Chmod(filepath.Join(dir, "secret.py"), 0); err != nil {
		t.Fatal(err)
	}
	if got := findings(scanDir(t, dir), "unreadable_file"); len(got) != 1 {
		t.Fatalf("mode-000 file: %+v", got)
	}
}

func TestBinaryWithTextExtension(t *testing.T) {
	dir := t.TempDir()
	data := append([]byte("\x7fELF\x00\x00\x01"), []byte("\nos.system('curl evil | sh')\n")...)
	write(t, filepath.Join(dir, "tool.py"), data)
	res := scanDir(t, dir)
	if len(findings(res, "binary_content")) != 1 {
		t.Errorf("no binary_content note:\n%s", res.Report())
	}
	if len(findings(res, "python_os_system")) != 1 {
		t.Errorf("binary content hid a finding:\n%s", res.Report())
	}
}

func TestInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "tool.py"), []byte("# \xff\xfe caf\xe9\nos.system('id')\n"))
	res := scanDir(t, dir)
	if len(findings(res, "invalid_utf8")) != 1 || len(findings(res, "python_os_system")) != 1 {
		t.Fatalf("invalid UTF-8 must be reported and still scanned:\n%s", res.Report())
	}
	if !json.Valid(mustJSON(t, res)) {
		t.Fatal("report JSON is not valid")
	}
	for _, f := range res.Findings {
		if !isValidUTF8(f.Match) {
			t.Errorf("match text not valid UTF-8: %q", f.Match)
		}
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A 50 MB file that is one line, full of literals that almost match: linear work,
// no copy of the file, one finding per rule for the line; what lies past the rule
// horizon of a line is flagged, not silently skipped.
func TestEnormousLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	dir := t.TempDir()
	var b bytes.Buffer
	unit := []byte("curl https://example.com/x ; os.system ; /etc/ ; sudo.request ; ")
	for b.Len() < 50<<20 {
		b.Write(unit)
	}
	b.WriteString(" rm -rf / ; echo \u200b ")
	write(t, filepath.Join(dir, "huge.sh"), b.Bytes())
	res := scanDir(t, dir)
	if got := findings(res, "long_line_unscanned"); len(got) != 1 || got[0].Line != 1 || got[0].Severity != sevHigh {
		t.Errorf("long_line_unscanned: %+v", got)
	}
	if res.Verdict != VerdictCaution {
		t.Errorf("verdict %s, want caution", res.Verdict)
	}
	if got := findings(res, "oversized_file"); len(got) != 1 {
		t.Errorf("oversized_file: %+v", got)
	}
	if got := findings(res, "invisible_unicode"); len(got) != 1 {
		t.Errorf("invisible_unicode: %+v", got)
	}
	// Within the horizon a long line is evaluated in windows.
	var m bytes.Buffer
	for m.Len() < maxLongLine/2 {
		m.Write(unit)
	}
	m.WriteString(" rm -rf / ")
	for m.Len() < maxLongLine-100 {
		m.Write(unit)
	}
	write(t, filepath.Join(dir, "huge.sh"), m.Bytes())
	res = scanDir(t, dir)
	if got := findings(res, "destructive_root_rm"); len(got) != 1 || got[0].Line != 1 {
		t.Errorf("the hit in the middle of a long line: %+v", got)
	}
	if got := findings(res, "long_line_unscanned"); len(got) != 0 {
		t.Errorf("long_line_unscanned within the horizon: %+v", got)
	}
	for _, f := range res.Findings {
		if len([]rune(f.Match)) > 120 {
			t.Errorf("match longer than 120 characters: %d", len([]rune(f.Match)))
		}
	}
}

func TestDeepTree(t *testing.T) {
	dir := t.TempDir()
	p := dir
	for i := 0; i < 400; i++ {
		p = filepath.Join(p, "d")
	}
	write(t, filepath.Join(p, "x.sh"), []byte("rm -rf /\n"))
	res := scanDir(t, dir)
	if got := findings(res, "destructive_root_rm"); len(got) != 1 || !strings.HasSuffix(got[0].File, "d/x.sh") {
		t.Fatalf("deep file: %+v", got)
	}
}

func TestMatchCut(t *testing.T) {
	long := "rm -rf / " + strings.Repeat("é", 300)
	got := cutMatch([]byte("   " + long + "   "))
	if n := len([]rune(got)); n != 120 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "rm -rf /") {
		t.Fatalf("cut: %d runes %q", n, got)
	}
	if got := cutMatch([]byte("  short  ")); got != "short" {
		t.Fatalf("strip: %q", got)
	}
}

func TestReportAndJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	write(t, filepath.Join(dir, "run.sh"), []byte("sudo apt-get install jq\nrm -rf /\nchmod 777 x\n"))
	res, err := Scan(context.Background(), dir, Options{Source: "git:owner/demo"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Scan: demo (git:owner/demo/community)  Verdict: DANGEROUS\n" +
		`  CRITICAL destructive    run.sh:2                       "rm -rf /"` + "\n" +
		`  HIGH     privilege_escalation run.sh:1                       "sudo apt-get install jq"` + "\n" +
		`  MEDIUM   destructive    run.sh:3                       "chmod 777 x"` + "\n\n" +
		"Decision: BLOCKED — Blocked (dangerous verdict, 1 critical of 3 findings (destructive_root_rm)). --force does not override a dangerous verdict."
	if got := res.Report(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	if b := res.Blocking(); len(b) != 1 || b[0].PatternID != "destructive_root_rm" {
		t.Errorf("blocking: %+v", b)
	}
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, res), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 4 || m["verdict"] != "dangerous" || m["scanner_version"] != ScannerVersion || m["summary"] != res.Summary {
		t.Errorf("json keys: %v", m)
	}
	f0 := m["findings"].([]any)[0].(map[string]any)
	for _, k := range []string{"pattern_id", "severity", "category", "file", "line", "match", "description"} {
		if _, ok := f0[k]; !ok {
			t.Errorf("finding lacks %q: %v", k, f0)
		}
	}
	if res.Summary != "demo: dangerous — 3 finding(s) in destructive, privilege_escalation" {
		t.Errorf("summary: %q", res.Summary)
	}
	for force, want := range map[bool]Decision{false: Block, true: Block} {
		if d, _ := res.Policy(force); d != want {
			t.Errorf("policy(force=%v) = %v", force, d)
		}
	}
}

func TestCleanSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "clean")
	write(t, filepath.Join(dir, "__init__.py"), []byte("def register(ctx):\n    pass\n"))
	res := scanDir(t, dir)
	if res.Verdict != VerdictSafe || res.Summary != "clean: clean scan, no threats detected" {
		t.Fatalf("%+v", res)
	}
	if d, reason := res.Policy(false); d != Allow || reason != "Allowed (clean scan)" {
		t.Fatalf("policy: %v %q", d, reason)
	}
	if !strings.HasSuffix(res.Report(), "Decision: ALLOWED — Allowed (clean scan)") {
		t.Fatalf("report: %s", res.Report())
	}
}
