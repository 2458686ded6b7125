//go:build unix

package config

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperStallEnv names the config file the helper process edits; it stops for
// good just before renaming its temp copy into place, and writes the copy's path
// to <file>.ready first.
const helperStallEnv = "HERMES_CONFIG_TEST_STALL_BEFORE_RENAME"

func helperStallBeforeRename(path string) {
	testHookBeforeRename = func(tmp string) {
		if err := os.WriteFile(path+".ready", []byte(tmp), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		select {} // until killed
	}
	_ = Store{Path: path}.Update(context.Background(), appendItem("from-the-killed-writer"))
	os.Exit(1)
}

func tempCopies(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".config.yaml") || strings.HasPrefix(e.Name(), "..env") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestKilledWriterTempIsRemoved: a writer killed (SIGKILL, a real process)
// between writing its temp copy and renaming it leaves the copy; the next writer
// deletes it, and the killed writer's edit never lands. Before, such copies
// stayed in HERMES_HOME forever.
func TestKilledWriterTempIsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("plugins:\n  enabled: [first]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperStallEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path + ".ready"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the helper writer never reached its rename")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := tempCopies(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf(".config.yaml.tmp-%d-", cmd.Process.Pid)) {
		t.Fatalf("the killed writer left %v, want its one temp copy named with its pid", got)
	}

	if err := (Store{Path: path}).Update(context.Background(), appendItem("second")); err != nil {
		t.Fatal(err)
	}
	if got := tempCopies(t, dir); len(got) != 0 {
		t.Errorf("temp copies left after the next write: %v", got)
	}
	if b, _ := os.ReadFile(path); string(b) != "plugins:\n  enabled: [first, second]\n" {
		t.Errorf("config.yaml = %q", b)
	}
}

// TestRemoveDeadTempsKeepsWhatMayBeLive: only copies of dead writers go; those
// of running processes, fresh copies of the old naming and other files stay.
func TestRemoveDeadTempsKeepsWhatMayBeLive(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * legacyTempAge)
	tests := []struct {
		name  string
		old   bool
		stays bool
	}{
		{fmt.Sprintf(".config.yaml.tmp-%d-123", dead.Process.Pid), false, false},
		{fmt.Sprintf("..env.tmp-%d-9", dead.Process.Pid), false, false},
		{".config.yaml.tmp-1-123", false, true}, // pid 1 runs
		{fmt.Sprintf(".config.yaml.tmp-%d-5", os.Getpid()), false, true},
		{".config.yaml8842", true, false}, // the old naming, old
		{".config.yaml8843", false, true}, // the old naming, fresh
		{".config.yaml.tmp-x-1", false, true},
		{".config.yaml.bak", true, true},
		{".config.yaml", true, true},
		{"config.yaml.lock", true, true},
		{fmt.Sprintf(".other.yaml.tmp-%d-1", dead.Process.Pid), false, true},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if tt.old {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	removeDeadTemps(dir, "config.yaml")
	removeDeadTemps(dir, ".env")
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(dir, tt.name))
		if stays := err == nil; stays != tt.stays {
			t.Errorf("%s: stays %v, want %v", tt.name, stays, tt.stays)
		}
	}
}
