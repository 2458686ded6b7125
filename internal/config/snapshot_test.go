package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSnapshot(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	write := func(t *testing.T, path, text string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	value := func(t *testing.T, s *Snapshot) any {
		t.Helper()
		doc, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := doc.GetPath([]string{"a"})
		return v
	}
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
		want   any
	}{
		{"unchanged file", func(*testing.T, string) {}, "one"},
		{"replaced by a rename (another inode)", func(t *testing.T, path string) {
			tmp := path + ".tmp"
			write(t, tmp, "a: two\n", old)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, "two"},
		{"edited in place, new time", func(t *testing.T, path string) { write(t, path, "a: six\n", old.Add(time.Second)) }, "six"},
		{"edited in place, other size", func(t *testing.T, path string) { write(t, path, "a: three\n", old) }, "three"},
		{"removed", func(t *testing.T, path string) { _ = os.Remove(path) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			write(t, path, "a: one\n", old)
			s := &Snapshot{Store: Store{Path: path}}
			if v := value(t, s); v != "one" {
				t.Fatalf("first read %v", v)
			}
			tc.change(t, path)
			if v := value(t, s); v != tc.want {
				t.Fatalf("after the change %v, want %v", v, tc.want)
			}
		})
	}
}

// An unchanged settled file is parsed once; a file written just now is parsed
// on every read (its next write may keep its time and size).
func TestSnapshotCachesSettledFilesOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("a: one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{Store: Store{Path: path}}
	first, _ := s.Load()
	if err := os.WriteFile(path, []byte("a: two\n"), 0o600); err != nil { // same size, maybe the same tick
		t.Fatal(err)
	}
	doc, _ := s.Load()
	if v, _ := doc.GetPath([]string{"a"}); v != "two" {
		t.Fatalf("a fresh file was served from the cache: %v", v)
	}
	if doc == first {
		t.Fatal("a fresh file was not parsed again")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Load()
	b, _ := s.Load()
	if a != b {
		t.Fatal("a settled, unchanged file was parsed again")
	}
}
