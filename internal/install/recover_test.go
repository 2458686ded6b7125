package install

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as a helper process: with HERMES_INSTALL_HELPER set, the test
// binary installs one plugin (a real, separate process) and exits.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HERMES_INSTALL_HELPER"); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

func helperMain(mode string) int {
	env := func(k string) string { return os.Getenv(k) }
	g := &Git{Env: env}
	in := &Installer{PluginsDir: os.Getenv("HELPER_PLUGINS"), Git: g, Credentials: &Credentials{Env: env, Git: g}}
	if mode == "hang" {
		// Stop with the staged tree complete, just before publication.
		in.hookStaged = func(dir string) {
			os.WriteFile(os.Getenv("HELPER_READY"), []byte(dir), 0o600)
			time.Sleep(time.Hour)
		}
	}
	res, err := in.Install(context.Background(), Request{Identifier: os.Getenv("HELPER_URL")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(res.Name)
	return 0
}

func helperCmd(t *testing.T, mode, pluginsDir, url string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HERMES_INSTALL_HELPER="+mode, "HELPER_PLUGINS="+pluginsDir, "HELPER_URL="+url, "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

func TestKilledInstallIsCleanedByNextRun(t *testing.T) {
	repo, sha := newRepo(t, pluginFiles("killed"))
	in, log := newInstaller(t, testEnv(t, nil))
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := helperCmd(t, "hang", in.PluginsDir, repo.URL(), "HELPER_READY="+ready)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !exists(ready) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("helper never reached publication: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left := dirListing(t, in.PluginsDir)
	if len(left) != 1 || !strings.HasPrefix(left[0], installPrefix) {
		t.Fatalf("after the kill: %v", left)
	}
	// The killed process held the lock; the kernel released it with the process.
	res, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: sha})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Removed stale staging folder") {
		t.Fatalf("log: %s", log)
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,"+res.Name {
		t.Fatalf("plugins dir: %v", got)
	}
}

func TestConcurrentInstallsInTwoProcesses(t *testing.T) {
	a, _ := newRepo(t, pluginFiles("alpha"))
	b, _ := newRepo(t, pluginFiles("beta"))
	in, _ := newInstaller(t, testEnv(t, nil))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i, r := range []*testRepo{a, b} {
		wg.Add(1)
		go func(i int, r *testRepo) {
			defer wg.Done()
			outs[i], errs[i] = helperCmd(t, "install", in.PluginsDir, r.URL()).CombinedOutput()
		}(i, r)
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	md := readMeta(t, in)
	if len(md.Rows) != 2 || md.Rows["alpha"].Source != a.URL() || md.Rows["beta"].Source != b.URL() {
		t.Fatalf("rows %+v", md.Rows)
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,alpha,beta" {
		t.Fatalf("plugins dir: %v", got)
	}
}

// TestRecoverEveryPublishStep stops a publish after each step (by building the
// state it leaves) and checks the next run ends in the old or the new state.
func TestRecoverEveryPublishStep(t *testing.T) {
	row := Row{Revision: strings.Repeat("a", 40), Source: "file:///new"}
	oldRow := Row{Revision: strings.Repeat("b", 40), Source: "file:///old"}
	type state struct{ tree, rev string }
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, stage string)
		want  state
	}{
		{"before txn", func(t *testing.T, dir, stage string) {
			os.MkdirAll(filepath.Join(stage, stagedTree), 0o700)
		}, state{"old", oldRow.Revision}},
		{"txn written", func(t *testing.T, dir, stage string) {
			stageTxn(t, stage, row)
		}, state{"old", oldRow.Revision}},
		{"old moved aside", func(t *testing.T, dir, stage string) {
			stageTxn(t, stage, row)
			os.Rename(filepath.Join(dir, "p"), filepath.Join(stage, oldTree))
		}, state{"old", oldRow.Revision}},
		{"new in place, metadata not written", func(t *testing.T, dir, stage string) {
			stageTxn(t, stage, row)
			os.Rename(filepath.Join(dir, "p"), filepath.Join(stage, oldTree))
			os.Rename(filepath.Join(stage, stagedTree), filepath.Join(dir, "p"))
		}, state{"new", row.Revision}},
		{"exchanged, metadata not written", func(t *testing.T, dir, stage string) {
			stageTxn(t, stage, row)
			if err := exchange(filepath.Join(stage, stagedTree), filepath.Join(dir, "p")); err != nil {
				t.Skip("no atomic exchange here:", err)
			}
		}, state{"new", row.Revision}},
		{"remove: tree moved away", func(t *testing.T, dir, stage string) {
			writeTxn(stage, txn{Op: "remove", Name: "p"})
			os.Rename(filepath.Join(dir, "p"), filepath.Join(stage, stagedTree))
		}, state{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			meta := filepath.Join(dir, MetadataFile)
			mkTree(t, filepath.Join(dir, "p"), "old")
			md := &Metadata{Rows: map[string]Row{"p": oldRow}}
			WriteMetadata(meta, md)
			prefix := installPrefix
			if strings.HasPrefix(tt.name, "remove") {
				prefix = removePrefix
			}
			stage, _ := os.MkdirTemp(dir, prefix)
			tt.setup(t, dir, stage)
			if err := recoverStaging(dir, meta, func(string) {}); err != nil {
				t.Fatal(err)
			}
			if exists(stage) {
				t.Fatal("staging folder kept")
			}
			b, _ := os.ReadFile(filepath.Join(dir, "p", "which"))
			got := state{string(b), readRow(t, meta, "p").Revision}
			if got != tt.want {
				t.Fatalf("state %+v, want %+v", got, tt.want)
			}
		})
	}
}

func stageTxn(t *testing.T, stage string, row Row) {
	t.Helper()
	mkTree(t, filepath.Join(stage, stagedTree), "new")
	id, _ := idOf(filepath.Join(stage, stagedTree))
	if err := writeTxn(stage, txn{Op: "install", Name: "p", Row: &row, Tree: &id}); err != nil {
		t.Fatal(err)
	}
}

func mkTree(t *testing.T, dir, which string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "which"), []byte(which), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readRow(t *testing.T, meta, name string) Row {
	md, err := ReadMetadata(meta)
	if err != nil {
		t.Fatal(err)
	}
	return md.Rows[name]
}

func TestRowRoundTrip(t *testing.T) {
	in := `{"allow_removed":true,"catalog":{"name":"n","pin":"p"},"pinned":true,"revision":"r","source":"s","update_url":"u","zzz":[1]}`
	var r Row
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(r)
	if string(out) != in {
		t.Fatalf("\n got %s\nwant %s", out, in)
	}
}
