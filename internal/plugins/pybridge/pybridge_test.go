package pybridge

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"
)

// Bytecode a local Python run left in the source tree is embedded too ("all:bridge"),
// but neither versioned nor unpacked.
func TestWalkSourceSkipsBytecode(t *testing.T) {
	src := fstest.MapFS{
		"bridge/entry.py":        {Data: []byte("import pkg\n")},
		"bridge/pkg/__init__.py": {Data: []byte("")},
		"bridge/pkg/rpc.py":      {Data: []byte("x = 1\n")},
	}
	withBytecode := fstest.MapFS{
		"bridge/__pycache__/entry.cpython-311.pyc":    {Data: []byte("stale")},
		"bridge/pkg/__pycache__/rpc.cpython-311.pyc":  {Data: []byte("stale")},
		"bridge/pkg/__pycache__/hermes-precompiled.x": {Data: []byte("")},
		"bridge/pkg/old.pyc":                          {Data: []byte("stale")},
	}
	for name, f := range src {
		withBytecode[name] = f
	}
	var got []string
	if err := walkSource(withBytecode, func(p string, d fs.DirEntry) error {
		if !d.IsDir() {
			got = append(got, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"bridge/entry.py", "bridge/pkg/__init__.py", "bridge/pkg/rpc.py"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
	if a, b := contentHash(src), contentHash(withBytecode); a != b {
		t.Fatalf("bytecode changed the version: %s != %s", a, b)
	}
}

// The unpacked bridge holds every embedded source file, the core package included.
func TestEnsureUnpacksEverySourceFile(t *testing.T) {
	cache := t.TempDir()
	script, err := Ensure(cache)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(script)
	if filepath.Base(script) != Script {
		t.Fatalf("script %s, want %s", script, Script)
	}
	if _, err := os.Stat(filepath.Join(dir, "_hermes_bridge_core", "__init__.py")); err != nil {
		t.Fatalf("core package not unpacked: %v", err)
	}
	n := 0
	err = walkSource(files, func(p string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		n++
		rel, _ := filepath.Rel("bridge", filepath.FromSlash(p))
		want, _ := files.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: unpacked copy differs (%v)", rel, err)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walked %d files: %v", n, err)
	}
	// A second Ensure finds the bridge in place.
	again, err := Ensure(cache)
	if err != nil || again != script {
		t.Fatalf("second Ensure: %s, %v; want %s", again, err, script)
	}
}
