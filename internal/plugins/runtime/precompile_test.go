package runtime

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/pybridge"
)

func TestPrecompileBridge(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	info, err := ProbePython(ctx, nil, ChooseInterpreter("", os.Getenv), os.Getenv, cache, t.TempDir())
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	if info.CacheTag == "" {
		t.Skipf("%s has no bytecode cache tag", info.Executable)
	}
	script, err := pybridge.Ensure(cache)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(script)
	core := filepath.Join(dir, "__pycache__", strings.TrimSuffix(pybridge.Script, ".py")+"."+info.CacheTag+".pyc")
	base := []string{"PATH=" + os.Getenv("PATH")}

	// Python may write its own bytecode: nothing to do, no process started.
	if did, err := PrecompileBridge(ctx, nil, info, dir, base); did || err != nil {
		t.Fatalf("without PYTHONDONTWRITEBYTECODE: did=%v err=%v", did, err)
	}
	// Bytecode goes to a prefix directory Python manages: leave it alone too.
	if did, _ := PrecompileBridge(ctx, nil, info, dir, append(base, "PYTHONDONTWRITEBYTECODE=1", "PYTHONPYCACHEPREFIX="+t.TempDir())); did {
		t.Fatal("compiled although PYTHONPYCACHEPREFIX is set")
	}
	if _, err := os.Stat(core); err == nil {
		t.Fatal("bytecode written when it should not be")
	}

	env := append(base, "PYTHONDONTWRITEBYTECODE=1")
	did, err := PrecompileBridge(ctx, nil, info, dir, env)
	if err != nil || !did {
		t.Fatalf("first precompile: did=%v err=%v", did, err)
	}
	if _, err := os.Stat(core); err != nil {
		t.Fatalf("no bytecode for the bridge core: %v", err)
	}
	if did, err := PrecompileBridge(ctx, nil, info, dir, env); did || err != nil {
		t.Fatalf("second precompile should find everything compiled: did=%v err=%v", did, err)
	}
}

func TestEnvValue(t *testing.T) {
	env := []string{"A=1", "B=", "A=2", "NOEQUALS"}
	if got := envValue(env, "A"); got != "2" {
		t.Fatalf("A=%q", got)
	}
	if got := envValue(env, "B"); got != "" {
		t.Fatalf("B=%q", got)
	}
	if got := envValue(env, "C"); got != "" {
		t.Fatalf("C=%q", got)
	}
}

// A bridge cache hermes cannot write to costs no interpreter start at all.
func TestPrecompileBridgeReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes through read-only permissions")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.py"), []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	info := PythonInfo{Executable: "/nonexistent/python3", CacheTag: "cpython-311"}
	did, err := PrecompileBridge(context.Background(), nil, info, dir, []string{"PYTHONDONTWRITEBYTECODE=1"})
	if did || err != nil {
		t.Fatalf("did=%v err=%v", did, err)
	}
}

// A failed attempt is not retried on every plugin start.
func TestPrecompileBridgeTriesOnce(t *testing.T) {
	dir := t.TempDir()
	info := PythonInfo{Executable: "/nonexistent/python3", CacheTag: "cpython-311"}
	env := []string{"PYTHONDONTWRITEBYTECODE=1"}
	if did, err := PrecompileBridge(context.Background(), nil, info, dir, env); did || err == nil {
		t.Fatalf("first attempt with a missing interpreter: did=%v err=%v", did, err)
	}
	if did, err := PrecompileBridge(context.Background(), nil, info, dir, env); did || err != nil {
		t.Fatalf("second attempt: did=%v err=%v", did, err)
	}
}

// Every module of the bridge gets its bytecode, the core package's submodules and
// the compat shims included: a plugin process imports them all from source otherwise.
func TestPrecompileBridgeCompilesEveryModule(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	info, err := ProbePython(ctx, nil, ChooseInterpreter("", os.Getenv), os.Getenv, cache, t.TempDir())
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	if info.CacheTag == "" {
		t.Skipf("%s has no bytecode cache tag", info.Executable)
	}
	script, err := pybridge.Ensure(cache)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(script)
	env := []string{"PATH=" + os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1"}
	if did, err := PrecompileBridge(ctx, nil, info, dir, env); err != nil || !did {
		t.Fatalf("precompile: did=%v err=%v", did, err)
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
			return err
		}
		n++
		pyc := filepath.Join(filepath.Dir(p), "__pycache__", strings.TrimSuffix(d.Name(), ".py")+"."+info.CacheTag+".pyc")
		if _, err := os.Stat(pyc); err != nil {
			t.Errorf("no bytecode for %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "_hermes_bridge_core", "__pycache__", "rpc."+info.CacheTag+".pyc")); err != nil || n < 10 {
		t.Fatalf("walked %d modules; core package compiled: %v", n, err)
	}
}
