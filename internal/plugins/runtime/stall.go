package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
)

// StallReporter writes what hermes knows about a call that went unanswered:
// the protocol connection's state, every goroutine of hermes and, for a Python
// plugin, its threads' stacks. Only when Enabled (HERMES_DEBUG_STALL; the test
// suites set it), to find the cause of a rare lost answer. The zero value
// reports nothing.
type StallReporter struct {
	Enabled bool
	// KeepDir, when set, also keeps every report there as a file: a command that
	// never ends never shows its stderr (scripts/test.sh prints the directory).
	KeepDir string
	LogsDir string    // where a Python plugin writes its thread dump on request
	Out     io.Writer // where reports are written (hermes' stderr)
	Now     func() time.Time
}

// Report writes the report of what (e.g. "tool x") of plugin. early is the
// snapshot taken while the call still waited (nil: it still waits now).
func (r *StallReporter) Report(plugin string, proc *Process, python bool, what string, early *StallSnapshot) {
	if r == nil || !r.Enabled {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hermes: stall report: %s of plugin %s got no answer\n", what, plugin)
	waited, dump := "(still waiting: see now)", early.dumpTaken()
	if early != nil {
		waited = early.Text()
	}
	fmt.Fprintf(&b, "connection while the call waited: %s\n", waited)
	if proc != nil {
		fmt.Fprintf(&b, "connection now: %s\n", proc.ConnState())
		if python && dump == nil {
			dump = r.requestDump(proc)
		}
	}
	b.WriteString("--- hermes goroutines ---\n")
	b.Write(allStacks())
	if dump != nil {
		text, err := readSettled(dump.path, dump.from)
		if err != nil {
			fmt.Fprintf(&b, "--- plugin threads: %v ---\n", err)
		} else {
			fmt.Fprintf(&b, "--- plugin threads (pid %d) ---\n%s", dump.pid, text)
		}
	}
	if r.Out != nil {
		_, _ = io.WriteString(r.Out, b.String())
	}
	if r.KeepDir != "" {
		now := clock.Now
		if r.Now != nil {
			now = r.Now
		}
		name := fmt.Sprintf("stall-%d-%d.txt", os.Getpid(), now().UnixNano())
		_ = os.WriteFile(filepath.Join(r.KeepDir, name), []byte(b.String()), 0o644)
	}
}

// threadDump is a Python plugin's thread dump asked for: the bridge appends it
// to path, from offset from.
type threadDump struct {
	path string
	from int64
	pid  int
}

func (r *StallReporter) requestDump(proc *Process) *threadDump {
	d := &threadDump{path: filepath.Join(r.LogsDir, fmt.Sprintf("stall-%d.txt", proc.Pid())), pid: proc.Pid()}
	if fi, err := os.Stat(d.path); err == nil {
		d.from = fi.Size() // an earlier report's dump: this one is appended
	}
	proc.RequestStackDump()
	return d
}

// WatchSlowCall reports a call without a timeout of its own (a plugin CLI
// command) that is still waiting after after; the returned func stops the watch.
func (r *StallReporter) WatchSlowCall(plugin string, proc func() *Process, python bool, what string, after time.Duration) func() {
	if r == nil || !r.Enabled {
		return func() {}
	}
	t := time.AfterFunc(after, func() {
		r.Report(plugin, proc(), python, fmt.Sprintf("%s (still waiting after %s)", what, after), nil)
	})
	return func() { t.Stop() }
}

// StallSnapshot records the connection's state at 90% of a call's timeout, while
// the call still waits (when the report is written, the call has given up and
// its bookkeeping is gone), and asks a Python plugin for its thread dump then:
// once the call has timed out the bridge starts threads for the cancel, and a
// dump racing a thread's creation can stop half-way. A nil snapshot is a
// valid, empty one.
type StallSnapshot struct {
	timer *time.Timer
	mu    sync.Mutex
	state string
	dump  *threadDump
}

// SnapshotBefore arms a snapshot for a call bounded by timeout; nil without
// reports or a timeout.
func (r *StallReporter) SnapshotBefore(proc func() *Process, python bool, timeout time.Duration) *StallSnapshot {
	if r == nil || !r.Enabled || timeout <= 0 {
		return nil
	}
	s := &StallSnapshot{state: "(not taken)"}
	s.timer = time.AfterFunc(timeout*9/10, func() {
		if p := proc(); p != nil {
			st := p.ConnState()
			var dump *threadDump
			if python {
				dump = r.requestDump(p)
			}
			s.mu.Lock()
			s.state, s.dump = st, dump
			s.mu.Unlock()
		}
	})
	return s
}

// SnapshotBeforeDeadline is SnapshotBefore for a call bounded by ctx's deadline
// (a hook callback's timeout is set by the dispatcher).
func (r *StallReporter) SnapshotBeforeDeadline(ctx context.Context, proc func() *Process, python bool) *StallSnapshot {
	if r == nil || !r.Enabled {
		return nil
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	return r.SnapshotBefore(proc, python, time.Until(deadline))
}

// Stop disarms the snapshot.
func (s *StallSnapshot) Stop() {
	if s != nil {
		s.timer.Stop()
	}
}

// Text is the state recorded ("(not taken)" if none was).
func (s *StallSnapshot) Text() string {
	if s == nil {
		return "(not taken)"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *StallSnapshot) dumpTaken() *threadDump {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dump
}

// allStacks is every goroutine's stack, as a panic prints them. runtime.Stack
// rather than runtime/pprof: linking pprof turns the runtime's heap profiling on,
// and its sampling costs every short hermes command page faults.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// readSettled reads the thread dump the bridge writes on the signal (past
// before, where an earlier dump ends) once it has stopped growing: a plugin a
// loaded machine schedules late may still be writing it, or not have begun,
// after any fixed wait; one it deschedules mid-line is not done either (every
// line of the dump ends in a newline). Bounded: a debugging aid must not hold
// a report long.
func readSettled(path string, before int64) ([]byte, error) {
	const settle, limit = 300 * time.Millisecond, 5 * time.Second
	var last []byte
	var err error
	stable := time.Duration(0)
	for waited := time.Duration(0); waited < limit; waited += 50 * time.Millisecond {
		time.Sleep(50 * time.Millisecond)
		var now []byte
		now, err = os.ReadFile(path)
		if err == nil && int64(len(now)) > before && len(now) == len(last) && now[len(now)-1] == '\n' {
			if stable += 50 * time.Millisecond; stable >= settle {
				return now[before:], nil
			}
		} else {
			stable = 0
		}
		last = now
	}
	if err != nil {
		return nil, err
	}
	return last[min(before, int64(len(last))):], nil
}
