package scan

import (
	"context"
	"os"
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
