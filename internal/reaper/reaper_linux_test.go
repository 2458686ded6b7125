package reaper

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/testutil/procs"
)

// guard bounds waits so a regression fails instead of hanging.
const guard = 10 * time.Second

// roleEnv makes the test binary play a part in a test (see TestMain).
const roleEnv = "REAPER_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "dumpable-host":
		os.Exit(dumpableHost())
	case "environ-reader":
		os.Exit(environReader())
	case "killed-host":
		os.Exit(killedHost())
	}
	os.Exit(m.Run())
}

// escapes are leaders that leave a process running outside their process group
// and print its pid once it has left.
var escapes = []struct {
	name   string
	script string
}{
	{"setsid", `setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000' "$ESCAPED" >/dev/null 2>&1 &
while [ ! -s "$ESCAPED" ]; do sleep 0.01; done; cat "$ESCAPED"`},
	// fork, setsid, fork: a daemon whose parent has gone, in a session of its own
	{"double fork", `python3 -c '
import os, sys
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    pid = os.fork()
    if pid:
        os.write(w, str(pid).encode()); os._exit(0)
    os.execvp("sleep", ["sleep", "1000"])
os.close(w)
print(os.read(r, 32).decode())
'`},
}

// modes are the containments this machine offers (the fallback always).
func modes(t *testing.T) []Options {
	t.Helper()
	out := []Options{{NoCgroups: true}}
	r := New(Options{})
	defer r.Close()
	if mode := r.Mode(); mode == "cgroup" {
		out = append(out, Options{})
	} else {
		t.Logf("cgroups not usable here: %s", mode)
	}
	return out
}

func modeName(o Options) string {
	if o.NoCgroups {
		return "subreaper"
	}
	return "cgroup"
}

// startEscaper starts script in a new cell of r and returns the cell, the
// leader's stdout and the pid of the process that escaped its group.
func startEscaper(t *testing.T, r *Reaper, script, marker string, stay bool) (*Cell, int) {
	t.Helper()
	if stay {
		script += "; exec sleep 1000"
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "HERMES_TEST_MARKER="+marker, "ESCAPED="+filepath.Join(t.TempDir(), "pid"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || !procs.Alive(pid) {
		t.Fatalf("escaper said %q (%v)", line, err)
	}
	return c, pid
}

func TestEscapedProcessDiesWithItsCell(t *testing.T) {
	for _, o := range modes(t) {
		for _, e := range escapes {
			t.Run(modeName(o)+"/"+e.name+"/leader exits", func(t *testing.T) {
				r := New(o)
				defer r.Close()
				marker := procs.NewMarker()
				c, pid := startEscaper(t, r, e.script, marker, false)
				if err := c.Wait(nil); err != nil {
					t.Fatal(err)
				}
				procs.WaitGone(t, pid, "escaped process after its leader exited", guard)
				procs.NoneMarked(t, marker, guard)
			})
			t.Run(modeName(o)+"/"+e.name+"/Kill", func(t *testing.T) {
				r := New(o)
				defer r.Close()
				marker := procs.NewMarker()
				c, pid := startEscaper(t, r, e.script, marker, true)
				waited := make(chan error, 1)
				go func() { waited <- c.Wait(nil) }()
				c.Kill()
				select {
				case <-waited:
				case <-time.After(guard):
					t.Fatal("the leader survived Kill")
				}
				procs.WaitGone(t, pid, "escaped process after Kill", guard)
				procs.NoneMarked(t, marker, guard)
			})
			t.Run(modeName(o)+"/"+e.name+"/hermes exits", func(t *testing.T) {
				r := New(o)
				marker := procs.NewMarker()
				c, pid := startEscaper(t, r, e.script, marker, true)
				waited := make(chan error, 1)
				go func() { waited <- c.Wait(nil) }()
				r.Close()
				procs.WaitGone(t, pid, "escaped process after Close", guard)
				<-waited
				procs.NoneMarked(t, marker, guard)
				if _, err := r.Start(exec.Command("true")); err == nil {
					t.Error("a closed reaper started a process")
				}
			})
		}
	}
}

// A CommandContext's cancellation (git's timeout) kills the whole cell, and Run
// returns at once instead of waiting for whoever holds its output pipe.
func TestRunCancelledKillsTheCell(t *testing.T) {
	for _, o := range modes(t) {
		t.Run(modeName(o), func(t *testing.T) {
			r := New(o)
			defer r.Close()
			marker := procs.NewMarker()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			// The helper keeps stdout open, as git-remote-http keeps git's stderr.
			cmd := exec.CommandContext(ctx, "sh", "-c", `sleep 1000 & setsid sleep 1000 & wait`)
			cmd.Env = append(os.Environ(), "HERMES_TEST_MARKER="+marker)
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.WaitDelay = time.Minute // the test fails by its guard, not by this
			done := make(chan error, 1)
			go func() { done <- r.Run(cmd) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a cancelled command succeeded")
				}
			case <-time.After(guard):
				t.Fatal("Run did not return after its context ended")
			}
			procs.NoneMarked(t, marker, guard)
		})
	}
}

// A process started elsewhere (a child of the Python fork server) joins a cell
// through CgroupDir or Env, and dies with it.
func TestProcessJoinsCell(t *testing.T) {
	for _, o := range modes(t) {
		t.Run(modeName(o), func(t *testing.T) {
			r := New(o)
			defer r.Close()
			c, err := r.NewCell()
			if err != nil {
				t.Fatal(err)
			}
			marker := procs.NewMarker()
			join := ":"
			if dir := c.CgroupDir(); dir != "" {
				join = "echo 0 > " + filepath.Join(dir, "cgroup.procs")
			}
			cmd := exec.Command("sh", "-c", join+` && { setsid sleep 1000 >/dev/null 2>&1 & echo $!; }`)
			cmd.Env = append(append(os.Environ(), "HERMES_TEST_MARKER="+marker), c.Env()...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
			if pid == 0 || !procs.Alive(pid) {
				t.Fatalf("joiner said %q", out)
			}
			c.Close()
			procs.WaitGone(t, pid, "process that joined the cell", guard)
			procs.NoneMarked(t, marker, guard)
		})
	}
}

// Cells leave no cgroup behind, and a closed cell can be killed and closed again.
func TestCellsLeaveNoCgroup(t *testing.T) {
	r := New(Options{})
	defer r.Close()
	if r.Mode() != "cgroup" {
		t.Skipf("cgroups not usable here: %s", r.Mode())
	}
	var dirs []string
	for range 3 {
		c, err := r.Start(exec.Command("true"))
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, c.CgroupDir())
		if err := c.Wait(nil); err != nil {
			t.Fatal(err)
		}
		c.Kill()
		c.Close()
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s is still there (%v)", d, err)
		}
	}
}

// The empty cgroup of a hermes that was killed outright is removed by the next.
func TestStaleCgroupRemoved(t *testing.T) {
	r := New(Options{})
	defer r.Close()
	if r.Mode() != "cgroup" {
		t.Skipf("cgroups not usable here: %s", r.Mode())
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(r.setup.parent, fmt.Sprintf("hermes-%d-1", dead.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	defer syscall.Rmdir(stale)
	r2 := New(Options{})
	defer r2.Close()
	if _, err := r2.NewCell(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale cgroup %s was not removed (%v)", stale, err)
	}
}

// TestKilledHermesLeavesNothing: when hermes itself is SIGKILLed, its watchdog
// kills every cell and removes the cgroups.
func TestKilledHermesLeavesNothing(t *testing.T) {
	r := New(Options{})
	defer r.Close()
	if r.Mode() != "cgroup" {
		t.Skipf("cgroups not usable here: %s", r.Mode())
	}
	marker := procs.NewMarker()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=killed-host", "HERMES_TEST_MARKER="+marker, "ESCAPED="+filepath.Join(t.TempDir(), "pid"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if len(f) != 2 {
		t.Fatalf("host said %q", line)
	}
	pid, _ := strconv.Atoi(f[0])
	if !procs.Alive(pid) {
		t.Fatalf("host said %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	procs.WaitGone(t, pid, "escaped process of a killed hermes", guard)
	procs.NoneMarked(t, marker, guard)
	deadline := time.Now().Add(guard)
	for {
		if _, err := os.Stat(f[1]); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cgroups of a killed hermes are still there: %s", f[1])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killedHost starts an escaper in a cell, prints "<escaped pid> <base cgroup>"
// and waits to be killed.
func killedHost() int {
	r := New(Options{})
	cmd := exec.Command("sh", "-c", escapes[0].script+"; exec sleep 1000")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if _, err := r.Start(cmd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Println(strings.TrimSpace(line), r.setup.base)
	select {}
}

// ---- PR_SET_DUMPABLE ----------------------------------------------------------

const secretVar = "HERMES_TEST_SECRET"

// TestEnvironUnreadableByChildOfSameUser: a process hermes starts, running as the
// same user, cannot read hermes' /proc/<pid>/environ once the reaper has been set
// up. Root bypasses this (CAP_SYS_PTRACE), so as root the test runs both as
// nobody; the control row (no reaper) shows the read works otherwise.
func TestEnvironUnreadableByChildOfSameUser(t *testing.T) {
	bin := os.Args[0]
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		dir, err := os.MkdirTemp("", "reaper-dumpable-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "reaper.test")
		if err := copyFile(os.Args[0], bin); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}
	}
	for _, tc := range []struct {
		name, reaper, want string
	}{
		{"without the reaper", "no", "readable"},
		{"with the reaper", "yes", "denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Dir = filepath.Dir(bin)
			cmd.Env = []string{roleEnv + "=dumpable-host", "REAPER_TEST_USE=" + tc.reaper, secretVar + "=s3cret-value", "PATH=" + os.Getenv("PATH")}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("host: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("the child reading its host's environ says %q, want %s", got, tc.want)
			}
		})
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// dumpableHost starts an environ reader as its child, through a reaper or not.
func dumpableHost() int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{roleEnv + "=environ-reader", "HOST_PID=" + strconv.Itoa(os.Getpid())}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var err error
	if os.Getenv("REAPER_TEST_USE") == "yes" {
		r := New(Options{})
		err = r.Run(cmd)
		r.Close()
	} else {
		err = cmd.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reader:", err)
		return 1
	}
	return 0
}

func environReader() int {
	b, err := os.ReadFile("/proc/" + os.Getenv("HOST_PID") + "/environ")
	switch {
	case err != nil:
		fmt.Println("denied:", err)
	case bytes.Contains(b, []byte("s3cret-value")):
		fmt.Println("readable")
	default:
		fmt.Println("no secret in", len(b), "bytes")
	}
	_, _ = io.WriteString(os.Stdout, "")
	return 0
}
