package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFileLimitSizes(t *testing.T) {
	const limit = 3 * 4096
	dir := t.TempDir()
	for _, size := range []int{0, 1, 600, 4095, 4096, 4097, 8192, 8193, limit, limit + 1, 5 * 4096} {
		want := bytes.Repeat([]byte("abcdefg\n"), size/8+1)[:size]
		path := filepath.Join(dir, "m.yaml")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readFileLimit(path, limit)
		if size > limit {
			if err != nil || !bytes.Equal(got, want[:limit+1]) {
				t.Errorf("size %d: got %d bytes, err %v; want the first %d bytes", size, len(got), err, limit+1)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: got %d bytes, err %v", size, len(got), err)
		}
	}
	if _, err := readFileLimit(filepath.Join(dir, "missing"), limit); !os.IsNotExist(err) {
		t.Errorf("missing file: err = %v, want not-exist", err)
	}
}
