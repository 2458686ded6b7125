package runtime

// Descendants that leave the plugin's process group (setsid, a daemon's double
// fork) are still the plugin's: they die when it stops, is killed or crashes,
// and when hermes exits, whether the plugin was exec'd or forked by the fork server.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hermes-go/hermes/pkg/protocol"
)

var escapes = []string{"setsid", "double-fork"}

// startEscaper starts the faulty plugin (through fs when set) and has it leave a
// sleeper outside its process group; it returns the plugin, its host and the
// sleeper's pid.
func startEscaper(t *testing.T, fs *ForkServer, how, marker string) (*Process, *faultHost, int) {
	t.Helper()
	interp, script := python(t)
	dir := filepath.Join(t.TempDir(), "escaper")
	writeFile(t, filepath.Join(dir, "__init__.py"), faultyPlugin, 0o644)
	h := newFaultHost()
	rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h), Fork: fs}
	spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: "escaper", Name: "escaper", Dir: dir, Source: "user"}},
		Env: os.Environ(), WorkDir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, _, err := rt.Start(ctx, spec, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopBounded(t, p) })
	if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	out, err := callTool(p, h.handle1(t, "daemon"), map[string]any{"marker": marker, "how": how})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(out)
	if err != nil || !alive(pid) {
		t.Fatalf("daemon answered %q", out)
	}
	if _, pgid := procStat(t, pid); pgid == p.Pid() {
		t.Fatalf("the sleeper is still in the plugin's process group %d", pgid)
	}
	return p, h, pid
}

func TestEscapedDescendantDiesWithThePlugin(t *testing.T) {
	if mode := testReaper.Mode(); mode != "cgroup" {
		// In the fallback, an orphan is found by its environment once reparented
		// to hermes, which this test process is not set up to be for all tests.
		t.Skipf("cells are not cgroups here (%s); TestHostExitTakesEscapedDaemonsDown covers the fallback", mode)
	}
	for _, fork := range []bool{false, true} {
		for _, how := range escapes {
			name := fmt.Sprintf("fork_server=%v/%s", fork, how)
			var fs *ForkServer
			if fork {
				interp, script := python(t)
				var err error
				fs, err = StartForkServer(context.Background(), testReaper, interp, script, PythonEnv(os.Environ()), t.TempDir(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer fs.Close()
			}
			t.Run(name+"/Stop", func(t *testing.T) {
				marker := newMarker(t)
				p, _, pid := startEscaper(t, fs, how, marker)
				stopBounded(t, p)
				waitGone(t, pid, "escaped sleeper of a stopped plugin")
				noMarkedProcs(t, marker)
			})
			t.Run(name+"/Kill", func(t *testing.T) {
				marker := newMarker(t)
				p, _, pid := startEscaper(t, fs, how, marker)
				p.Kill()
				<-p.Exited()
				waitGone(t, pid, "escaped sleeper of a killed plugin")
				noMarkedProcs(t, marker)
			})
			t.Run(name+"/crash", func(t *testing.T) {
				marker := newMarker(t)
				p, h, pid := startEscaper(t, fs, how, marker)
				_, err := callTool(p, h.handle1(t, "os_exit"), map[string]any{"code": 9})
				if err == nil || !strings.Contains(err.Error(), "exit status 9") {
					t.Fatalf("got %v", err)
				}
				waitGone(t, pid, "escaped sleeper of a crashed plugin")
				noMarkedProcs(t, marker)
			})
		}
	}
}

// TestHostExitTakesEscapedDaemonsDown: a mini host (hermes' runtime and reaper in
// a process of its own) exits, having stopped its plugin or not; the daemon the
// plugin left outside its process group is gone, with cgroups and without.
func TestHostExitTakesEscapedDaemonsDown(t *testing.T) {
	for _, mode := range []string{"auto", "subreaper"} {
		for _, fork := range []bool{false, true} {
			for _, how := range escapes {
				for _, noStop := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/fork_server=%v/%s/stop=%v", mode, fork, how, !noStop), func(t *testing.T) {
						marker := newMarker(t)
						host, stdin, _, pid := startMiniHost(t, miniHostConfig{Marker: marker, Fork: fork, Reaper: mode, Escape: how, NoStop: noStop})
						stdin.Close()
						if err := host.Wait(); err != nil {
							t.Fatalf("mini host: %v", err)
						}
						waitGone(t, pid, "daemon of a plugin after hermes exited")
						noMarkedProcs(t, marker)
					})
				}
			}
		}
	}
}

// TestHostKilledTakesEscapedDaemonsDown: when hermes is SIGKILLed, the reaper's
// watchdog kills the cells, so even a daemon that left the plugin's process group
// dies. (Without cgroups it survives: see DESIGN.md.)
func TestHostKilledTakesEscapedDaemonsDown(t *testing.T) {
	if mode := testReaper.Mode(); mode != "cgroup" {
		t.Skipf("cells are not cgroups here (%s)", mode)
	}
	for _, fork := range []bool{false, true} {
		for _, how := range escapes {
			t.Run(fmt.Sprintf("fork_server=%v/%s", fork, how), func(t *testing.T) {
				marker := newMarker(t)
				host, _, pluginPid, pid := startMiniHost(t, miniHostConfig{Marker: marker, Fork: fork, Reaper: "auto", Escape: how})
				if err := host.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				_ = host.Wait()
				waitGone(t, pluginPid, "plugin of a killed host")
				waitGone(t, pid, "daemon of a plugin after hermes was killed")
				noMarkedProcs(t, marker)
			})
		}
	}
}
