package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// procStatFields returns the fields of /proc/PID/stat after the command name:
// state, ppid, pgrp, session, tty_nr, ...
func procStatFields(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("read stat of %d: %v", pid, err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
}

// procStat returns the parent pid and process group of pid from /proc.
func procStat(t *testing.T, pid int) (ppid, pgid int) {
	fields := procStatFields(t, pid)
	ppid, _ = strconv.Atoi(fields[1])
	pgid, _ = strconv.Atoi(fields[2])
	return ppid, pgid
}

// Plugins forked from the server are separate processes in their own groups, report
// how they ended, and leave nothing behind.
func TestForkServerPlugins(t *testing.T) {
	interp, script := python(t)
	ctx := context.Background()
	marker := newMarker(t)
	h := newFaultHost()
	fs, err := StartForkServer(ctx, testReaper, interp, script, PythonEnv(append(os.Environ(), "HERMES_TEST_MARKER="+marker)), t.TempDir(), h.sink)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	rt := &Python{Interpreter: interp, Script: script, Options: testOptions(h), Fork: fs}

	const n = 4
	plugins := make([]*Process, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("forked-%d", i)
			dir := filepath.Join(t.TempDir(), id)
			writeFile(t, filepath.Join(dir, "__init__.py"), faultyPlugin, 0o644)
			spec := Spec{Init: protocol.InitializeParams{Plugin: protocol.PluginInfo{ID: id, Name: id, Dir: dir, Source: "user"}},
				Env: append(os.Environ(), "HERMES_TEST_MARKER="+marker), WorkDir: dir}
			p, _, err := rt.Start(ctx, spec, h.handle)
			if err == nil {
				err = p.Call(ctx, protocol.MethodRegister, struct{}{}, nil)
			}
			plugins[i] = p
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range plugins {
		ppid, pgid := procStat(t, p.Pid())
		if ppid != fs.pid || pgid != p.Pid() {
			t.Fatalf("plugin %s: parent %d (server %d), group %d: want a child of the server leading its own group", p.ID(), ppid, fs.pid, pgid)
		}
		if out, err := callTool(p, h.handle1(t, "ok"), nil); err != nil || out != "ok "+strconv.Itoa(p.Pid()) {
			t.Fatalf("plugin %s answered %q, %v", p.ID(), out, err)
		}
	}

	// Exits are reported through the server, the way exec'd plugins report them.
	cases := []struct {
		p    *Process
		tool string
		args map[string]any
		want string
	}{
		{plugins[0], "os_exit", map[string]any{"code": 3}, "exit status 3"},
		{plugins[1], "segfault", nil, "killed by signal segmentation fault"},
	}
	for _, c := range cases {
		_, err := callTool(c.p, h.handle1(t, c.tool), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: error %v, want it to say %q", c.tool, err, c.want)
		}
		<-c.p.Exited()
		if got := c.p.ExitDescription(); got != c.want {
			t.Fatalf("%s: exit %q, want %q", c.tool, got, c.want)
		}
	}

	// A grandchild dies with its plugin.
	gpid, err := callTool(plugins[2], h.handle1(t, "spawn"), map[string]any{"marker": marker})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := strconv.Atoi(gpid)
	stopBounded(t, plugins[2])
	waitGone(t, g, "grandchild of a stopped forked plugin")

	// Closing the server takes down what is still running.
	last := plugins[3]
	fs.Close()
	waitGone(t, last.Pid(), "forked plugin after the server closed")
	<-last.Exited()
	noMarkedProcs(t, marker)
}
