package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hermes-go/hermes/internal/testutil/pty"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ttyOf returns the controlling terminal of pid (0: none).
func ttyOf(t *testing.T, pid int) int {
	n, _ := strconv.Atoi(procStatFields(t, pid)[4])
	return n
}

// A plugin never shares hermes' controlling terminal: one that opens /dev/tty
// (getpass, ssh asking for a password) from its background process group was
// stopped by SIGTTIN, and hermes waited for it forever. The test re-runs itself
// as a child that has a pseudo-terminal as its controlling terminal, starts
// plugins both ways (direct and through the fork server) and reports theirs.
func TestPluginsHaveNoControllingTerminal(t *testing.T) {
	if os.Getenv("HERMES_TEST_CTTY_CHILD") == "1" {
		pluginTTYsChild(t)
		return
	}
	_, tty := pty.Open(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPluginsHaveNoControllingTerminal$", "-test.v")
	cmd.Env = append(os.Environ(), "HERMES_TEST_CTTY_CHILD=1")
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var seen int
	for _, line := range strings.Split(string(out), "\n") {
		var how string
		var hostTTY, pluginTTY int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "TTY %s host=%d plugin=%d", &how, &hostTTY, &pluginTTY); err != nil {
			continue
		}
		seen++
		if hostTTY == 0 {
			t.Fatalf("the child has no controlling terminal; the test proves nothing:\n%s", out)
		}
		if pluginTTY != 0 {
			t.Errorf("plugin started %s has hermes' controlling terminal (%d)", how, pluginTTY)
		}
	}
	if seen != 2 {
		t.Fatalf("want 2 reports from the child, got %d:\n%s", seen, out)
	}
}

func pluginTTYsChild(t *testing.T) {
	interp, script := python(t)
	ctx := context.Background()
	h := newFaultHost()
	fs, err := StartForkServer(ctx, testReaper, interp, script, PythonEnv(os.Environ()), t.TempDir(), h.sink)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	for _, how := range []string{"direct", "forked"} {
		rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h)}
		if how == "forked" {
			rt.Fork = fs
		}
		dir := filepath.Join(t.TempDir(), how)
		writeFile(t, filepath.Join(dir, "__init__.py"), faultyPlugin, 0o644)
		spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: how, Name: how, Dir: dir, Source: "user"}},
			Env: os.Environ(), WorkDir: dir}
		p, _, err := rt.Start(ctx, spec, h.handle)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Call(ctx, protocol.MethodRegister, struct{}{}, nil); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("TTY %s host=%d plugin=%d\n", how, ttyOf(t, os.Getpid()), ttyOf(t, p.Pid()))
		p.Stop(ctx)
	}
}
