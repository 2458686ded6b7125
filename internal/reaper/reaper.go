// Package reaper keeps the processes hermes starts, and whatever they start in
// turn, from outliving the work they were started for, and hermes itself.
//
// Every process hermes starts (a plugin, the Python fork server, git, a terminal
// command) leads a Cell. Where hermes may create cgroups (cgroup v2 with
// cgroup.kill, Linux 5.14 and later), a cell is a cgroup of its own: nothing in it
// can leave it, whatever it does (setsid, a double fork), and the kernel kills it
// as a whole. Elsewhere on Linux hermes becomes a child subreaper, so what escapes
// a cell's process group is reparented to hermes instead of init; it is found by
// the cell's token in its environment and killed when the cell ends, and whatever
// is left is killed when hermes exits. On other systems a cell is its leader's
// process group.
//
// A cell ends with its leader: when the leader exits, the rest of the cell is
// killed before the leader is reaped (so its process group id cannot have been
// reused). The Reaper also makes hermes non-dumpable on Linux, so a plugin running
// as the same user cannot read hermes' memory or environment through /proc.
//
// Nothing happens until the first cell is made: commands that start no process
// pay nothing. One Reaper serves one process; a nil *Reaper makes plain cells
// (process groups only).
package reaper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

// Options configure a Reaper.
type Options struct {
	// NoCgroups uses the subreaper fallback even where cgroups would work
	// (HERMES_NO_CGROUPS=1).
	NoCgroups bool
}

// Reaper makes the cells of one hermes process.
type Reaper struct {
	opts  Options
	once  sync.Once
	setup setupState

	// startMu is held for reading while a process starts and for writing while
	// Close kills what is left, so nothing starts unseen during that sweep.
	startMu sync.RWMutex

	mu       sync.Mutex
	closed   bool
	cells    map[*Cell]struct{}
	leaders  map[int]bool // subreaper: live processes hermes started and will reap itself
	cgroupOK bool         // new cells are cgroups

	sweeps sweeper
}

// New returns a Reaper; nothing is set up until it makes its first cell.
func New(opts Options) *Reaper {
	return &Reaper{opts: opts}
}

// setupState is what the first cell found out about this system.
type setupState struct {
	parent    string // hermes' own cgroup
	base      string // the cgroup of this Reaper's cells, in parent
	subreaper bool   // hermes is a child subreaper
	why       string // why cells are not cgroups
	watchdog  *watchdog
	// orphanWatch kills the escaped processes of subreaper cells if hermes
	// dies without sweeping them (SIGKILL).
	orphanWatch *watchdog
}

// cellSeq numbers cells process-wide (cgroup names must not clash between two
// Reapers of one test process).
var cellSeq atomic.Uint64

type kind int

const (
	kindGroup     kind = iota // the leader's process group only
	kindCgroup                // a cgroup of its own
	kindSubreaper             // a process group plus a token hermes finds orphans by
)

// tokenVar carries a subreaper cell's token into its processes' environment.
const tokenVar = "HERMES_PROCESS_CELL"

// Cell is one contained process tree: a leader started with Start (or a process
// started elsewhere that joins it, see CgroupDir and Env) and all its descendants.
type Cell struct {
	r     *Reaper
	kind  kind
	dir   string // kindCgroup: the cgroup directory
	token string // kindSubreaper: the value of tokenVar

	cmd *exec.Cmd // set by Start, for Wait

	mu       sync.Mutex
	proc     *os.Process // the leader, once started
	leader   int
	ownGroup bool // the leader leads its own process group
	reaped   bool // the leader was reaped: its pid may be reused, never signal it
	closed   bool
}

// NewCell makes an empty cell. On a nil Reaper it is a plain process-group cell.
func (r *Reaper) NewCell() (*Cell, error) {
	if r == nil {
		return &Cell{}, nil
	}
	r.once.Do(r.init)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("hermes is exiting: no new process is started")
	}
	c := &Cell{r: r}
	if r.cgroupOK {
		if dir, err := r.mkCgroup(); err != nil {
			// Containment is weaker, not absent: carry on with the fallback (Mode
			// says why) rather than refuse to work.
			r.cgroupOK = false
			r.setup.why = fmt.Sprintf("cannot create a cgroup: %v", err)
			r.enableSubreaper()
		} else {
			c.kind, c.dir = kindCgroup, dir
		}
	}
	if c.kind == kindGroup && r.setup.subreaper {
		c.kind = kindSubreaper
		c.token = strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(cellSeq.Add(1), 10)
	}
	if r.cells == nil {
		r.cells = map[*Cell]struct{}{}
	}
	r.cells[c] = struct{}{}
	return c, nil
}

// Mode says how cells are contained ("cgroup", "subreaper" or "process group")
// and, for the fallbacks, why; it sets the Reaper up if it was not yet.
func (r *Reaper) Mode() string {
	if r == nil {
		return "process group"
	}
	r.once.Do(r.init)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.cgroupOK:
		return "cgroup"
	case r.setup.subreaper:
		return "subreaper (" + r.setup.why + ")"
	}
	return "process group (" + r.setup.why + ")"
}

// Start starts cmd as the leader of a new cell.
func (r *Reaper) Start(cmd *exec.Cmd) (*Cell, error) {
	c, err := r.NewCell()
	if err != nil {
		return nil, err
	}
	if err := c.Start(cmd); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Run starts cmd in a cell of its own, waits for it, and kills whatever it left
// running: exec.Cmd.Run, contained. A CommandContext's cancellation kills the
// whole cell.
func (r *Reaper) Run(cmd *exec.Cmd) error {
	c, err := r.Start(cmd)
	if err != nil {
		return err
	}
	return c.Wait(nil)
}

// CgroupDir is the cell's cgroup directory ("" if it is not a cgroup): a process
// started outside Start (a child of the Python fork server) joins the cell by
// writing "0" to its cgroup.procs before it runs anything else.
func (c *Cell) CgroupDir() string { return c.dir }

// Env is what the environment of a process started outside Start must hold for
// the cell to find its orphans (empty unless the cell is a subreaper cell).
func (c *Cell) Env() []string {
	if c.kind != kindSubreaper {
		return nil
	}
	return []string{tokenVar + "=" + c.token}
}

// Start starts cmd as the cell's leader. The leader gets a process group of its
// own unless cmd asks for a session (Setsid). If cmd was made by
// exec.CommandContext, cancelling its context kills the whole cell.
func (c *Cell) Start(cmd *exec.Cmd) error {
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	if !attr.Setsid {
		attr.Setpgid, attr.Pgid = true, 0
	}
	closeFD, err := c.prepare(cmd, &attr)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &attr
	if cmd.Cancel != nil {
		cancel := cmd.Cancel
		cmd.Cancel = func() error {
			c.Kill()
			return cancel()
		}
	}
	c.cmd = cmd
	if c.r != nil {
		c.r.startMu.RLock()
		defer c.r.startMu.RUnlock()
		c.r.mu.Lock()
		closed := c.r.closed
		c.r.mu.Unlock()
		if closed {
			closeFD()
			return errors.New("hermes is exiting: no new process is started")
		}
	}
	err = cmd.Start()
	closeFD()
	if err != nil {
		return c.startFailed(err)
	}
	c.mu.Lock()
	c.proc, c.leader, c.ownGroup = cmd.Process, cmd.Process.Pid, true
	c.mu.Unlock()
	if c.kind == kindSubreaper {
		c.r.mu.Lock()
		if c.r.leaders == nil {
			c.r.leaders = map[int]bool{}
		}
		c.r.leaders[cmd.Process.Pid] = true
		c.r.mu.Unlock()
	}
	return nil
}

// Wait waits for the leader started by Start to exit, kills the rest of the cell
// before the leader is reaped, calls beforeReap (if set) at the moment the leader's
// pid stops being safe to signal, reaps it and closes the cell. It returns what
// exec.Cmd.Wait returns.
func (c *Cell) Wait(beforeReap func()) error {
	pid := c.cmd.Process.Pid
	unreaped := exitedUnreaped(pid)
	if unreaped {
		// A zombie keeps its pid, so its group id cannot have been reused yet.
		c.killMembers(false)
	}
	c.mu.Lock()
	c.reaped = true
	ownGroup := c.ownGroup
	c.mu.Unlock()
	if beforeReap != nil {
		beforeReap()
	}
	err := c.cmd.Wait()
	if !unreaped && ownGroup {
		// No way to wait without reaping here: best effort, as the group id is
		// only reused once the group is empty.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if c.r != nil && c.kind == kindSubreaper {
		c.r.mu.Lock()
		delete(c.r.leaders, pid)
		c.r.mu.Unlock()
	}
	c.Close()
	return err
}

// SignalGroup sends sig to the leader's process group while its id cannot have
// been reused (the leader is not yet reaped): the polite step before Kill.
func (c *Cell) SignalGroup(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped && c.leader > 0 && c.ownGroup {
		_ = syscall.Kill(-c.leader, sig)
	}
}

// Kill kills every process of the cell now, the leader included. It does not wait
// for them to exit; it is safe at any time, also after the leader was reaped.
func (c *Cell) Kill() {
	c.killMembers(true)
	c.mu.Lock()
	proc := c.proc
	c.mu.Unlock()
	if proc != nil {
		_ = proc.Kill() // by pidfd: safe even after the reap
	}
}

// killMembers kills the cell's processes: the cgroup, or the leader's group while
// its id cannot have been reused, plus (subreaper, with sweep) the orphans
// carrying the token, which takes a pass over /proc.
func (c *Cell) killMembers(sweep bool) {
	c.mu.Lock()
	closed := c.closed
	if !c.reaped && c.leader > 0 && c.ownGroup {
		_ = syscall.Kill(-c.leader, syscall.SIGKILL)
	}
	c.mu.Unlock()
	if closed {
		return
	}
	switch c.kind {
	case kindCgroup:
		killCgroup(c.dir)
	case kindSubreaper:
		if sweep {
			c.r.sweeps.run(c.r, c.token)
		}
	}
}

// Close kills whatever is left in the cell and removes it. It is idempotent; a
// cell whose leader was started by Start is closed by Wait.
func (c *Cell) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.killMembers(true)
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	if c.kind == kindCgroup {
		removeCgroup(c.dir)
	}
	if c.r != nil {
		c.r.mu.Lock()
		delete(c.r.cells, c)
		c.r.mu.Unlock()
	}
}

// Close is for the end of the process: it kills every cell still open and, in
// subreaper mode, every process below hermes, and makes later starts fail.
func (r *Reaper) Close() {
	if r == nil {
		return
	}
	r.startMu.Lock()
	defer r.startMu.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	cells := make([]*Cell, 0, len(r.cells))
	for c := range r.cells {
		cells = append(cells, c)
	}
	subreaper := r.setup.subreaper
	r.mu.Unlock()
	for _, c := range cells {
		c.Kill()
	}
	for _, c := range cells {
		c.Close()
	}
	r.closeCgroups()
	if subreaper {
		r.stopOrphanWatch() // before the sweep, which would kill it as hermes' descendant
		r.sweepOrphans(nil)
	}
}

// sweeper coalesces the orphan sweeps of cells ending at the same time (all the
// plugins stopping at exit) into one pass over /proc.
type sweeper struct {
	mu      sync.Mutex
	running bool
	pending map[string]bool
	done    chan struct{} // closed when the pass serving pending has ended
}

// run kills the orphans carrying token, in this goroutine or by waiting for the
// pass another one is about to make.
func (s *sweeper) run(r *Reaper, token string) {
	s.mu.Lock()
	if s.pending == nil {
		s.pending = map[string]bool{}
	}
	s.pending[token] = true
	if s.done == nil {
		s.done = make(chan struct{})
	}
	done := s.done
	if s.running {
		s.mu.Unlock()
		<-done
		return
	}
	s.running = true
	for {
		tokens, ch := s.pending, s.done
		s.pending, s.done = nil, nil
		s.mu.Unlock()
		r.sweepOrphans(tokens)
		close(ch)
		s.mu.Lock()
		if len(s.pending) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
	}
}
