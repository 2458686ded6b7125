package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/testutil/coldrun"
)

// Environment of the helper process that TestUpdateNoLostUpdatesAcrossProcesses starts by
// re-executing the test binary.
const (
	helperPathEnv  = "HERMES_CONFIG_TEST_HELPER_PATH"
	helperItemsEnv = "HERMES_CONFIG_TEST_HELPER_ITEMS"
)

var regexpLine = regexp.MustCompile(`:\d+: `)

func TestMain(m *testing.M) {
	coldrun.Child(coldFuncs)
	if path := os.Getenv(helperPathEnv); path != "" {
		os.Exit(helperAppend(path, strings.Split(os.Getenv(helperItemsEnv), ",")))
	}
	if path := os.Getenv(helperStallEnv); path != "" {
		helperStallBeforeRename(path)
	}
	goleak.VerifyTestMain(m)
}

// helperAppend is the child process: one Update per item, each appending to plugins.enabled.
func helperAppend(path string, items []string) int {
	for _, item := range items {
		err := Store{Path: path}.Update(context.Background(), func(d *Doc) error {
			_, err := d.ListAppend("plugins.enabled", item)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
	}
	return 0
}

func appendItem(item string) func(d *Doc) error {
	return func(d *Doc) error {
		_, err := d.ListAppend("plugins.enabled", item)
		return err
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	d, err := Store{Path: filepath.Join(t.TempDir(), "config.yaml")}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Map()) != 0 || len(d.Bytes()) != 0 {
		t.Errorf("missing file loaded as %q / %v, want an empty document", d.Bytes(), d.Map())
	}
}

func TestUpdateCreatesNewFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "profile")
	path := filepath.Join(dir, "config.yaml")
	err := Store{Path: path}.Update(context.Background(), appendItem("hello-world"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "_config_version: 21\nplugins:\n  enabled:\n    - hello-world\n"
	if string(got) != want {
		t.Errorf("new file =\n%q\nwant\n%q", got, want)
	}
	assertMode(t, path, 0o600)
	assertMode(t, dir, 0o700)
}

func TestUpdateWithoutChangeWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := (Store{Path: path}).Update(context.Background(), func(*Doc) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a no-op Update created the file (stat error %v)", err)
	}

	if err := os.WriteFile(path, []byte("plugins:\n  enabled: [a]\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	err := Store{Path: path}.Update(context.Background(), appendItem("a")) // already there
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("an Update that changed nothing replaced the file")
	}
}

func TestUpdateKeepsModeAndComments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	src := realisticForTest(t)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (Store{Path: path}).Update(context.Background(), appendItem("my-plugin")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile(filepath.Join("testdata", "golden", "append_block_list.yaml"))
	if !bytes.Equal(got, want) {
		t.Errorf("file after Update differs from the golden append:\n%s", got)
	}
	assertMode(t, path, 0o644)
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".config.yaml*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestUpdateFailingFnLeavesFileIdentical(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	src := []byte(realisticForTest(t))
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Store{Path: path}.Update(context.Background(), func(d *Doc) error {
		if _, err := d.ListAppend("plugins.enabled", "half-done"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error = %v, want fn's error", err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, src) {
		t.Errorf("file changed although fn failed:\n%s", got)
	}
}

func TestUpdateMalformedFileIsUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	src := []byte("model:\n  default: x\nplugins:\n  enabled: [a, b\n  disabled: []\n")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	called := false
	err := Store{Path: path}.Update(context.Background(), func(*Doc) error { called = true; return nil })
	if err == nil {
		t.Fatal("Update on a malformed file succeeded")
	}
	if !strings.HasPrefix(err.Error(), path+":") || !regexpLine.MatchString(err.Error()) {
		t.Errorf("error %q should start with %s:<line>:", err, path)
	}
	if called {
		t.Error("fn ran on a malformed file")
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, src) {
		t.Error("malformed file was modified")
	}
	if _, err := (Store{Path: path}).Load(); err == nil {
		t.Error("Load of a malformed file succeeded")
	}
}

func TestUpdateFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "hermes.yaml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("# mine\nplugins: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if err := (Store{Path: link}).Update(context.Background(), appendItem("a")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("config.yaml is no longer a symlink (%v)", err)
	}
	got, _ := os.ReadFile(real)
	if string(got) != "# mine\nplugins: {enabled: [a]}\n" {
		t.Errorf("link target = %q", got)
	}
}

func TestUpdateHonoursContextWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	holder := flock.New(path + ".lock")
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Store{Path: path}.Update(ctx, appendItem("a"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with a cancelled context and a held lock = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("file was written without the lock")
	}
}

func TestUpdateNoLostUpdatesAcrossGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(realisticForTest(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Store{Path: path}.Update(context.Background(), appendItem("g"+strconv.Itoa(i)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{}
	for i := range n {
		want = append(want, "g"+strconv.Itoa(i))
	}
	assertEnabledContains(t, path, want)
}

func TestUpdateNoLostUpdatesAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(realisticForTest(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	const procs, perProc = 6, 4
	var cmds []*exec.Cmd
	var want []string
	for p := range procs {
		var items []string
		for i := range perProc {
			items = append(items, fmt.Sprintf("p%d-%d", p, i))
		}
		want = append(want, items...)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperPathEnv+"="+path, helperItemsEnv+"="+strings.Join(items, ","))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() && stderr.Len() > 0 {
				t.Logf("helper %d stderr: %s", p, stderr.String())
			}
		})
	}
	// Goroutines of this process compete with the helpers at the same time.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		item := "local-" + strconv.Itoa(i)
		want = append(want, item)
		go func() {
			defer wg.Done()
			if err := (Store{Path: path}).Update(context.Background(), appendItem(item)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	assertEnabledContains(t, path, want)
	got, _ := os.ReadFile(path)
	if !bytes.HasPrefix(got, []byte("# Hermes Agent configuration\n# Edited by hand; hermes keeps these comments.\n")) {
		t.Errorf("header comments lost after concurrent updates:\n%s", got)
	}
}

func assertEnabledContains(t *testing.T, path string, want []string) {
	t.Helper()
	d, err := Store{Path: path}.Load()
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := Plugins(d)
	have := map[string]int{}
	for _, n := range ps.Enabled {
		have[n]++
	}
	for _, w := range want {
		if have[w] != 1 {
			t.Errorf("plugins.enabled has %q %d times, want once", w, have[w])
		}
	}
	if len(ps.Enabled) != len(want)+2 { // + hello-world and observability/langfuse
		t.Errorf("plugins.enabled has %d items, want %d: %v", len(ps.Enabled), len(want)+2, ps.Enabled)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s mode = %o, want %o", path, got, want)
	}
}

// TestUpdateLockFailuresSayWhy: a lock held elsewhere past the deadline says it
// timed out; a lock file that cannot be opened says so, with the system's reason.
func TestUpdateLockFailuresSayWhy(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		holder := flock.New(path + ".lock")
		if err := holder.Lock(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = holder.Unlock() }()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := Store{Path: path}.Update(ctx, appendItem("a"))
		want := "timed out waiting for the lock " + path + ".lock (another hermes may be writing it)"
		if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Update = %v, want %q wrapping context.DeadlineExceeded", err, want)
		}
	})
	t.Run("lock file is a directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.Mkdir(path+".lock", 0o700); err != nil {
			t.Fatal(err)
		}
		err := Store{Path: path}.Update(context.Background(), appendItem("a"))
		if err == nil || !strings.HasPrefix(err.Error(), "cannot open the lock file "+path+".lock: ") {
			t.Fatalf("Update = %v, want a 'cannot open the lock file' error", err)
		}
	})
	t.Run("permission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root may write any directory")
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		err := Store{Path: path}.Update(context.Background(), appendItem("a"))
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "cannot open the lock file") {
			t.Fatalf("Update = %v, want a permission error opening the lock file", err)
		}
	})
}

// An edit through a Store that knows the plugins directory migrates an older
// file first, in the same write: the edit must not create plugins.enabled on
// an unmigrated file and so switch off the plugins the migration grandfathers.
func TestUpdateMigratesBeforeTheEdit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(filepath.Join(plugins, "old-one"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "old-one", "plugin.yaml"), []byte("name: old-one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("_config_version: 20  # old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (Store{Path: path, PluginsDir: plugins}).Update(context.Background(), appendItem("new-one")); err != nil {
		t.Fatal(err)
	}
	d, err := Store{Path: path}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Get("plugins.enabled"); !reflect.DeepEqual(v, []any{"old-one", "new-one"}) {
		t.Errorf("plugins.enabled = %v, want [old-one new-one]", v)
	}
	if v, _ := d.Get("_config_version"); v != LatestVersion {
		t.Errorf("_config_version = %v, want %d", v, LatestVersion)
	}
}
