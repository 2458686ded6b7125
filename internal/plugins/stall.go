package plugins

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/discovery"
)

// reportStall writes what hermes knows about a call that went unanswered to
// stderr: the protocol connection's state, every goroutine of hermes and, for a
// Python plugin, its threads' stacks. Only with HERMES_DEBUG_STALL set (the test
// suites set it), to find the cause of a rare lost answer.
func (m *Manager) reportStall(p *Plugin, what, waited string) {
	var b strings.Builder
	fmt.Fprintf(&b, "hermes: stall report: %s of plugin %s got no answer\n", what, p.Key)
	fmt.Fprintf(&b, "connection while the call waited: %s\n", waited)
	proc := p.process()
	if proc != nil {
		fmt.Fprintf(&b, "connection now: %s\n", proc.ConnState())
		if p.Runtime == "python" {
			proc.RequestStackDump()
			time.Sleep(500 * time.Millisecond) // the bridge writes its dump on the signal
		}
	}
	b.WriteString("--- hermes goroutines ---\n")
	b.Write(allStacks())
	if proc != nil && p.Runtime == "python" {
		dump, err := os.ReadFile(filepath.Join(m.opts.Home.LogsDir(), fmt.Sprintf("stall-%d.txt", proc.Pid())))
		if err != nil {
			fmt.Fprintf(&b, "--- plugin threads: %v ---\n", err)
		} else {
			fmt.Fprintf(&b, "--- plugin threads (pid %d) ---\n%s", proc.Pid(), dump)
		}
	}
	out := m.stallOut
	if out == nil {
		out = os.Stderr
	}
	_, _ = io.WriteString(out, b.String())
	// HERMES_DEBUG_STALL=/abs/dir also keeps the report there: a command that
	// never ends never shows its stderr (scripts/test.sh prints the directory).
	if dir := m.opts.Env("HERMES_DEBUG_STALL"); filepath.IsAbs(dir) {
		name := fmt.Sprintf("stall-%d-%d.txt", os.Getpid(), time.Now().UnixNano())
		_ = os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
	}
}

// stallDebug reports whether HERMES_DEBUG_STALL asks for stall reports: a true
// value, or the directory to keep them in.
func (m *Manager) stallDebug() bool {
	v := m.opts.Env("HERMES_DEBUG_STALL")
	return discovery.Truthy(v) || filepath.IsAbs(v)
}

// watchSlowCall reports a call without a timeout of its own (a plugin CLI
// command) that is still waiting after after; the returned func stops the watch.
func (m *Manager) watchSlowCall(p *Plugin, what string, after time.Duration) func() {
	if !m.stallDebug() {
		return func() {}
	}
	t := time.AfterFunc(after, func() {
		m.reportStall(p, fmt.Sprintf("%s (still waiting after %s)", what, after), "(still waiting: see now)")
	})
	return func() { t.Stop() }
}

// stallSnapshot records the connection's state at 90% of a call's timeout, while
// the call still waits (when the report is written, the call has given up and
// its bookkeeping is gone).
type stallSnapshot struct {
	timer *time.Timer
	mu    sync.Mutex
	state string
}

func (m *Manager) snapshotBefore(p *Plugin, timeout time.Duration) *stallSnapshot {
	s := &stallSnapshot{state: "(not taken)"}
	s.timer = time.AfterFunc(timeout*9/10, func() {
		if proc := p.process(); proc != nil {
			st := proc.ConnState()
			s.mu.Lock()
			s.state = st
			s.mu.Unlock()
		}
	})
	return s
}

// snapshotBeforeDeadline is snapshotBefore for a call bounded by ctx's deadline
// (a hook callback's timeout is set by the dispatcher); nil without stall
// reports or a deadline.
func (m *Manager) snapshotBeforeDeadline(ctx context.Context, p *Plugin) *stallSnapshot {
	if !m.stallDebug() {
		return nil
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	return m.snapshotBefore(p, time.Until(deadline))
}

func (s *stallSnapshot) stop() {
	if s != nil {
		s.timer.Stop()
	}
}

func (s *stallSnapshot) text() string {
	if s == nil {
		return "(not taken)"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// allStacks is every goroutine's stack, as a panic prints them. runtime.Stack
// rather than runtime/pprof: linking pprof turns the runtime's heap profiling on,
// and its sampling costs every short hermes command page faults.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
