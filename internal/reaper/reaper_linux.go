//go:build linux

package reaper

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// init runs before the first cell: it makes hermes non-dumpable and picks how
// cells are contained.
func (r *Reaper) init() {
	// Before any child exists. A non-dumpable process's /proc files belong to root
	// and it cannot be ptraced, so a plugin of the same user can read neither
	// hermes' environment (API keys) nor its memory. Children are dumpable again
	// after their exec.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := r.probeCgroups(); err != nil {
		r.setup.why = err.Error()
		r.enableSubreaper()
	}
}

// probeCgroups makes the first cgroup (kept for the first cell) if this process
// may: cgroup v2 mounted, a directory of its own it can write, cgroup.kill, and
// clone3 allowed (seccomp profiles of some container runtimes refuse it).
func (r *Reaper) probeCgroups() error {
	if r.opts.NoCgroups {
		return errors.New("HERMES_NO_CGROUPS is set")
	}
	parent, err := ownCgroup()
	if err != nil {
		return err
	}
	if err := unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK); err != nil {
		return fmt.Errorf("cgroup %s is not writable: %w", parent, err)
	}
	// clone3 with no arguments is refused by the kernel (EINVAL) and creates no
	// process; a seccomp filter answers ENOSYS or EPERM instead.
	if _, _, errno := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0); errno != unix.EINVAL {
		return fmt.Errorf("clone3 is not available: %w", errno)
	}
	r.setup.parent = parent
	removeStale(parent)
	base := filepath.Join(parent, fmt.Sprintf("hermes-%d-%d", os.Getpid(), cellSeq.Add(1)))
	if err := unix.Mkdir(base, 0o755); err != nil {
		return fmt.Errorf("cannot create a cgroup in %s: %w", parent, err)
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.kill")); err != nil {
		_ = unix.Rmdir(base)
		return errors.New("cgroup.kill is missing (Linux 5.14 or later has it)")
	}
	r.setup.base = base
	r.setup.watchdog = startWatchdog(base)
	r.cgroupOK = true
	return nil
}

// ownCgroup is the directory of this process's cgroup v2.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no cgroup information: %w", err)
	}
	path := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			path = rest
			break
		}
	}
	if !strings.HasPrefix(path, "/") {
		return "", errors.New("not in a cgroup v2 hierarchy")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("no mount information: %w", err)
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		root, mnt := unescapeMount(f[3]), unescapeMount(f[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok || (root != "/" && rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mkCgroup makes a cell's cgroup in the base.
func (r *Reaper) mkCgroup() (string, error) {
	dir := filepath.Join(r.setup.base, strconv.FormatUint(cellSeq.Add(1), 10))
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// closeCgroups kills whatever is left in the base, removes it and lets the
// watchdog go.
func (r *Reaper) closeCgroups() {
	r.mu.Lock()
	base, w := r.setup.base, r.setup.watchdog
	r.setup.base, r.setup.watchdog = "", nil
	r.mu.Unlock()
	if base != "" {
		killCgroup(base)
		for _, leaf := range subdirs(base) {
			removeCgroup(leaf)
		}
		removeCgroup(base)
	}
	w.stop()
}

func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// removeStale removes the empty cgroups a hermes whose watchdog was killed too
// left behind (rmdir only succeeds on an empty cgroup, so nothing running is
// touched).
func removeStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "hermes-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		base := filepath.Join(parent, e.Name())
		for _, leaf := range subdirs(base) {
			_ = unix.Rmdir(leaf)
		}
		_ = unix.Rmdir(base)
	}
}

// watchdogScript waits for end of file on its stdin, whose only writer is hermes,
// then kills the base cgroup ($0) and removes it with its cells.
const watchdogScript = `read x
echo 1 >"$0/cgroup.kill" 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
  [ -d "$0" ] || exit 0
  for d in "$0"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  rmdir "$0" 2>/dev/null && exit 0
  sleep 0.1
done`

// orphanWatchdogScript is the watchdog of subreaper mode: when hermes ($0 is
// its pid) is gone, the processes that escaped its cells were reparented
// past it and only their token finds them, so it kills every process whose
// environment carries one of hermes' cell tokens, until none is left.
const orphanWatchdogScript = `read x
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
  found=
  for f in $(grep -lzs "^` + tokenVar + `=$0\." /proc/[0-9]*/environ); do
    p=${f#/proc/}
    kill -9 "${p%/environ}" 2>/dev/null && found=1
  done
  [ -n "$found" ] || exit 0
  sleep 0.1
done`

// watchdog is a tiny shell outside the cells that kills them all when hermes is
// gone, however it went (SIGKILL, the OOM killer, a second Ctrl-C): nothing else
// would, since the kernel does not kill a cgroup when the process that made it
// dies.
type watchdog struct {
	cmd *exec.Cmd
	w   *os.File // the write end of its stdin: close-on-exec, so only hermes holds it
}

// startWatchdog starts the watchdog of base; nil if it cannot (the cells still
// work while hermes lives).
func startWatchdog(base string) *watchdog {
	return startWatchdogScript("hermes-cgroup-watchdog", watchdogScript, base)
}

func startWatchdogScript(name, script, arg string) *watchdog {
	rd, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer rd.Close()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{name, "-c", script, arg}, Stdin: rd,
		// A session of its own: a Ctrl-C meant for hermes must not end it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil
	}
	return &watchdog{cmd: cmd, w: w}
}

// stop lets the watchdog exit (its cgroup is gone by now) and reaps it.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	w.w.Close()
	_ = w.cmd.Wait()
}

// cancel ends a watchdog hermes no longer needs (it swept the orphans
// itself) without letting it run its sweep.
func (w *watchdog) cancel() {
	if w == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	w.w.Close()
	_ = w.cmd.Wait()
}

// enableSubreaper makes hermes the reaper of what its descendants orphan, and
// starts the watchdog that kills them if hermes dies without its sweep.
func (r *Reaper) enableSubreaper() {
	if r.setup.subreaper {
		return
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		r.setup.why += "; cannot become a child subreaper: " + err.Error()
		return
	}
	r.setup.subreaper = true
	r.setup.orphanWatch = startWatchdogScript("hermes-orphan-watchdog", orphanWatchdogScript, strconv.Itoa(os.Getpid()))
}

// stopOrphanWatch lets the subreaper watchdog go after hermes' own sweep.
func (r *Reaper) stopOrphanWatch() {
	r.mu.Lock()
	w := r.setup.orphanWatch
	r.setup.orphanWatch = nil
	r.mu.Unlock()
	w.cancel()
}

// prepare makes cmd start inside the cell: created straight into its cgroup
// (clone3's CLONE_INTO_CGROUP, so not even its first instruction runs outside),
// or with the cell's token in its environment.
func (c *Cell) prepare(cmd *exec.Cmd, attr *syscall.SysProcAttr) (func(), error) {
	switch c.kind {
	case kindCgroup:
		fd, err := unix.Open(c.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open the process's cgroup: %w", err)
		}
		attr.UseCgroupFD, attr.CgroupFD = true, fd
		return func() { unix.Close(fd) }, nil
	case kindSubreaper:
		env := cmd.Env
		if env == nil {
			env = cmd.Environ()
		}
		cmd.Env = append(slices.Clip(env), c.Env()...)
	}
	return func() {}, nil
}

// startFailed explains a start that failed because of the cgroup (clone3 into a
// cgroup refused, which the probe could not foresee) and stops using cgroups for
// later cells; the exec.Cmd cannot be started again.
func (c *Cell) startFailed(err error) error {
	if c.kind != kindCgroup || c.r == nil {
		return err
	}
	for _, e := range []error{unix.ENOSYS, unix.EOPNOTSUPP, unix.EBUSY, unix.EPERM} {
		if errors.Is(err, e) {
			c.r.mu.Lock()
			if c.r.cgroupOK {
				c.r.cgroupOK = false
				c.r.setup.why = fmt.Sprintf("starting a process in a cgroup failed: %v", err)
				c.r.enableSubreaper()
			}
			c.r.mu.Unlock()
			return fmt.Errorf("%w (it could not be started in a cgroup of its own; later processes are contained without cgroups, and HERMES_NO_CGROUPS=1 skips them from the start)", err)
		}
	}
	return err
}

// exitedUnreaped blocks until the child pid has exited, without reaping it: while
// it is a zombie its pid, and so its process group id, cannot be reused.
func exitedUnreaped(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}

// killCgroup kills every process in the cgroup dir and its descendants at once
// (the kernel also stops them from forking meanwhile).
func killCgroup(dir string) {
	fd, err := unix.Open(filepath.Join(dir, "cgroup.kill"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_, _ = unix.Write(fd, []byte("1"))
	unix.Close(fd)
}

// removeCgroup kills what is in dir and removes it once it is empty. Killed
// processes take a moment to exit; one stuck in the kernel (uninterruptible sleep)
// may take longer than we wait, and its cgroup is then left behind, to be removed
// by a later hermes.
func removeCgroup(dir string) {
	killCgroup(dir)
	wait := 50 * time.Microsecond
	for waited := time.Duration(0); ; waited += wait {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) || !errors.Is(err, unix.EBUSY) || waited > 3*time.Second {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// sweepOrphans kills the processes of hermes' tree (its descendants, which in
// subreaper mode is every process hermes is responsible for) that carry one of
// tokens, or all of them when tokens is nil, and reaps those that became hermes'
// children. Hermes' own leaders are only killed by the final sweep (tokens nil)
// and are left for their waiters to reap. A process whose parent is still dying
// has not been reparented yet; walking the whole tree finds it anyway. It repeats
// until no live match is left, for at most a few seconds.
func (r *Reaper) sweepOrphans(tokens map[string]bool) {
	self := os.Getpid()
	killed := map[int]bool{}
	wait := 100 * time.Microsecond
	for waited := time.Duration(0); waited < 3*time.Second; waited += wait {
		tree := descendants(self)
		r.mu.Lock()
		leaders := maps.Clone(r.leaders)
		r.mu.Unlock()
		live := 0
		for _, p := range tree {
			switch {
			case p.zombie:
				if p.ppid == self && killed[p.pid] && !leaders[p.pid] {
					reap(p.pid)
				}
			case tokens != nil && (leaders[p.pid] || !carriesToken(p.pid, tokens)):
			default:
				if unix.Kill(p.pid, unix.SIGKILL) == nil {
					killed[p.pid] = true
					live++
				}
			}
		}
		if live == 0 {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

type procInfo struct {
	pid, ppid int
	zombie    bool
}

// descendants lists the processes below root, read from /proc.
func descendants(root int) []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]procInfo{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == root {
			continue
		}
		if ppid, zombie, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], procInfo{pid, ppid, zombie})
		}
	}
	var out []procInfo
	queue := children[root]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p.pid]...)
	}
	return out
}

// parentOf reads pid's parent and whether it is a zombie from /proc/<pid>/stat.
func parentOf(pid int) (ppid int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0] == "Z", err == nil
}

// carriesToken reports whether pid's environment names one of the cells in tokens.
// A process that made itself non-dumpable, or replaced its environment, is not
// found this way; Close kills it when hermes exits.
func carriesToken(pid int, tokens map[string]bool) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	prefix := []byte(tokenVar + "=")
	for entry := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok && tokens[string(v)] {
			return true
		}
	}
	return false
}

// reap collects a killed orphan, giving it a moment to die; one that does not
// stays a zombie until hermes exits.
func reap(pid int) {
	wait := 50 * time.Microsecond
	for waited := time.Duration(0); waited < time.Second; waited += wait {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || (err != nil && !errors.Is(err, unix.EINTR)) {
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, 10*time.Millisecond)
	}
}
