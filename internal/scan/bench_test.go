package scan

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkScanTree scans the tree named by SCAN_BENCH_TREE (bench/scan.sh makes a
// 200 MB one with bench/scangen); without it, the shipped examples.
func BenchmarkScanTree(b *testing.B) {
	dir := os.Getenv("SCAN_BENCH_TREE")
	if dir == "" {
		dir = filepath.Join("..", "..", "examples", "plugins")
	}
	for b.Loop() {
		if _, err := Scan(context.Background(), dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanPluginPython is a typical plugin (a corpus sample of median size: three
// modules, a cross-file chain) scanned as a whole, Python analysis included; compare
// with BenchmarkPythonStart, `python3 -c pass` of the same interpreter (issue 18: at
// most 50 ms and at most 3× that).
func BenchmarkScanPluginPython(b *testing.B) {
	py := testPython(b)
	dir := filepath.Join("testdata", "corpus", "py-credential-theft", "aws-credentials-dns")
	for b.Loop() {
		res, err := Scan(context.Background(), dir, Options{Python: py})
		if err != nil || res.Verdict != VerdictDangerous {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkScanExamplesPython: the three shipped examples, Python analysis included.
func BenchmarkScanExamplesPython(b *testing.B) {
	py := testPython(b)
	dir := filepath.Join("..", "..", "examples", "plugins", "python-hooks-example")
	for b.Loop() {
		if _, err := Scan(context.Background(), dir, Options{Python: py}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPythonStart is the baseline: `python3 -c pass` of the interpreter above.
func BenchmarkPythonStart(b *testing.B) {
	py := testPython(b)
	for b.Loop() {
		if err := exec.Command(py, "-c", "pass").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
