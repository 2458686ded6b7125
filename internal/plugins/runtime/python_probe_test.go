package runtime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The probe's cached sys.path is dropped when a site directory changes: a .pth file
// added (or removed) there, as editable installs do, changes what sys.path holds.
func TestProbePythonCacheFollowsPthFiles(t *testing.T) {
	base := t.TempDir()
	venv := filepath.Join(base, "venv")
	if out, err := exec.Command(ChooseInterpreter("", os.Getenv), "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a venv: %v %s", err, out)
	}
	interp := filepath.Join(venv, "bin", "python")
	cacheDir := filepath.Join(base, "cache")
	dev := filepath.Join(base, "src", "devplug")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := func() []string {
		t.Helper()
		info, err := ProbePython(context.Background(), nil, interp, func(string) string { return "" }, cacheDir, base)
		if err != nil {
			t.Fatal(err)
		}
		return info.Path
	}
	if p := probe(); slices.Contains(p, dev) {
		t.Fatalf("sys.path %v holds %s before any .pth names it", p, dev)
	}
	sitePkgs, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	if len(sitePkgs) != 1 {
		t.Fatalf("site-packages of the venv: %v", sitePkgs)
	}
	pth := filepath.Join(sitePkgs[0], "devplug.pth")
	steps := []struct {
		name   string
		change func() error
		want   bool
	}{
		{"a .pth added", func() error { return os.WriteFile(pth, []byte(dev+"\n"), 0o644) }, true},
		{"cached again", func() error { return nil }, true},
		{"the .pth removed", func() error { return os.Remove(pth) }, false},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatal(err)
		}
		// Not relying on the file system's timestamp granularity.
		later := time.Now().Add(time.Duration(len(st.name)) * time.Second)
		if st.name != "cached again" {
			if err := os.Chtimes(sitePkgs[0], later, later); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := os.Stat(filepath.Join(cacheDir, "python-probe.json"))
		if got := slices.Contains(probe(), dev); got != st.want {
			t.Errorf("%s: %s on sys.path = %v, want %v", st.name, dev, got, st.want)
		}
		after, _ := os.Stat(filepath.Join(cacheDir, "python-probe.json"))
		if reprobed := !os.SameFile(before, after); reprobed != (st.name != "cached again") {
			t.Errorf("%s: probed the interpreter again = %v", st.name, reprobed)
		}
	}
}
