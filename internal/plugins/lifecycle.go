package plugins

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/runtime"
)

// RestartPolicy says how a plugin whose process went away is started again:
// at most Tries restarts within any Window, the first after Delay and each
// next one after four times the one before. A plugin that needs one more is
// marked failed for the rest of the process. The zero value is
// DefaultRestartPolicy; a policy with Tries set and no Delay restarts at once.
type RestartPolicy struct {
	Tries  int
	Window time.Duration
	Delay  time.Duration
}

// DefaultRestartPolicy: 3 restarts a minute, 250 ms, 1 s and 4 s after the
// trouble, so a plugin that crashes at every start is given up on within ~6 s.
var DefaultRestartPolicy = RestartPolicy{Tries: 3, Window: time.Minute, Delay: 250 * time.Millisecond}

func (rp RestartPolicy) orDefault() RestartPolicy {
	if rp.Tries <= 0 {
		return DefaultRestartPolicy
	}
	return rp
}

// next decides on one more restart at now, given the times of the earlier
// ones: the times still within the window (now among them when allowed), and
// how long to wait first.
func (rp RestartPolicy) next(recent []time.Time, now time.Time) (kept []time.Time, delay time.Duration, ok bool) {
	for _, t := range recent {
		if now.Sub(t) < rp.Window {
			kept = append(kept, t)
		}
	}
	if len(kept) >= rp.Tries {
		return kept, 0, false
	}
	return append(kept, now), rp.Delay << (2 * len(kept)), true
}

// within says the window in words ("within a minute").
func (rp RestartPolicy) within() string {
	if rp.Window == time.Minute {
		return "within a minute"
	}
	return "within " + rp.Window.String()
}

// watch is the exit watch of one plugin process.
type watch struct {
	proc    *runtime.Process
	handled bool // the exit has been taken up (guarded by the plugin's mu)
}

// exited reports an exit not taken up yet; call with the plugin's mu held.
func (w *watch) exited() bool {
	if w.handled {
		return false
	}
	select {
	case <-w.proc.Exited():
		return true
	default:
		return false
	}
}

// watchProcess starts the exit watch of p's process proc, once what it
// registered is in force: if proc ends without hermes stopping it, p is
// restarted as the policy allows.
func (m *Manager) watchProcess(p *Plugin, proc *runtime.Process) {
	if proc == nil {
		return
	}
	w := &watch{proc: proc}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.watchers.Add(1)
	m.mu.Unlock()
	p.mu.Lock()
	p.watch = w
	p.mu.Unlock()
	go func() {
		defer m.watchers.Done()
		<-proc.Exited()
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if !closed {
			m.restart(p, proc, proc.EndReason())
		}
		p.mu.Lock()
		w.handled = true
		p.mu.Unlock()
		m.changed()
	}()
}

// restartAsync stops an unresponsive plugin for real and starts it again.
func (m *Manager) restartAsync(p *Plugin, reason string) { m.restart(p, nil, reason) }

// restart replaces p's process: crashed is the process that ended by itself
// (nil: the current one stopped answering and is killed). Its registrations
// stay in place while it restarts: calls to it fail with a clear error, so a
// fail-closed hook (pre_tool_call) blocks instead of vanishing, and hook order
// and suppression windows survive. When the new process registers exactly
// what the old one did (the same messages, so the same handles) nothing else
// changes; otherwise its registrations are replaced. Restarts are counted
// against the policy; past it, p is failed and its registrations stay, failing
// with a message that says how to disable it.
func (m *Manager) restart(p *Plugin, crashed *runtime.Process, reason string) {
	p.mu.Lock()
	if p.builtin != nil || p.restarting || p.failed || (crashed != nil && p.proc != crashed) {
		// Someone else is on it, or the process that ended was already replaced.
		p.mu.Unlock()
		return
	}
	p.restarting, p.crashed, p.restartWhy = true, crashed != nil, reason
	old := p.proc
	p.proc = nil
	p.mu.Unlock()
	// What the new process registers is held back to compare with what stays in force.
	m.reg.Begin(p.Key)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		// Shutting down: no restart, but Close may already have collected the
		// processes, so the one taken out of p here must be stopped here.
		if old != nil {
			old.Kill()
			<-old.Exited()
		}
		p.mu.Lock()
		p.restarting = false
		p.mu.Unlock()
		m.reg.Resume(p.Key)
		return
	}
	m.restarts.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.restarts.Done()
		defer m.changed()
		if old != nil {
			// It did not answer in time (or is gone already): no graceful shutdown
			// request, straight to signals.
			old.Kill()
			<-old.Exited()
		}
		m.restartLoop(p, reason)
	}()
}

// restartLoop starts p again until a start succeeds or the policy says no.
func (m *Manager) restartLoop(p *Plugin, reason string) {
	policy := m.opts.Restart.orDefault()
	last := reason
	for {
		p.mu.Lock()
		recent, delay, ok := policy.next(p.recent, m.now())
		p.recent = recent
		p.mu.Unlock()
		if !ok {
			m.giveUp(p, policy, last)
			return
		}
		m.log.Warn(fmt.Sprintf("plugin %s: %s; restarting its process in %s (restart %d of %d allowed %s)",
			p.Key, last, delay, len(recent), policy.Tries, policy.within()))
		if !m.pause(delay) {
			m.withdraw(p) // shutting down
			p.mu.Lock()
			p.restarting = false
			p.mu.Unlock()
			return
		}
		m.reg.DiscardPending(p.Key)
		ctx, cancel := context.WithTimeout(context.Background(), registerTimeout)
		err := m.start(ctx, p, nil)
		cancel()
		if err == nil {
			break
		}
		// Said by the next line logged: the next restart's or the giving up.
		last = "restart failed: " + oneLine(err.Error())
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		if proc := p.process(); proc != nil {
			proc.Stop(context.Background())
		}
		p.mu.Lock()
		p.restarting = false
		p.mu.Unlock()
		return
	}
	if m.reg.SameAsCommitted(p.Key) {
		m.reg.Resume(p.Key)
	} else {
		m.withdraw(p)
		m.commit(p)
	}
	p.mu.Lock()
	p.restarting, p.crashed, p.restartWhy = false, false, ""
	p.restarts++
	p.lastRestart = reason
	proc := p.proc
	p.mu.Unlock()
	m.watchProcess(p, proc)
	if proc != nil {
		m.log.Warn(fmt.Sprintf("plugin %s: restarted (pid %d)", p.Key, proc.Pid()))
	}
}

// giveUp marks p failed: its registrations stay in force and every call to it
// fails saying so, which a fail-closed hook turns into a block that names the
// plugin and the command to disable it.
func (m *Manager) giveUp(p *Plugin, policy RestartPolicy, last string) {
	restarts := "restarts"
	if policy.Tries == 1 {
		restarts = "restart"
	}
	msg := fmt.Sprintf("hermes gave up restarting it after %d %s %s; run `hermes plugins disable %s` and restart hermes to go on without it (last: %s)",
		policy.Tries, restarts, policy.within(), p.Key, last)
	p.mu.Lock()
	p.restarting, p.crashed, p.restartWhy = false, false, ""
	p.failed, p.Loaded, p.Error = true, false, msg
	p.mu.Unlock()
	m.reg.Resume(p.Key)
	m.log.Warn(fmt.Sprintf("plugin %s: failed: %s", p.Key, msg))
}

// pause waits d, or until Close begins (false).
func (m *Manager) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-m.closing:
		return false
	}
}

func (m *Manager) now() time.Time { return m.opts.Clock() }

// oneLine keeps a multi-line error (a plugin's last output) on one log line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " / ")), " ")
}

// changed wakes Settle: a restart ended or an exit was taken up.
func (m *Manager) changed() {
	m.mu.Lock()
	close(m.settle)
	m.settle = make(chan struct{})
	m.mu.Unlock()
}

// Settle waits until no plugin is being restarted and every process that
// ended has been taken up, so a state read next is an outcome, or ctx ends.
// `hermes plugins show` uses it: a plugin that crashed while loading is shown
// restarted or failed, not halfway.
func (m *Manager) Settle(ctx context.Context) {
	for {
		m.mu.Lock()
		wake := m.settle
		m.mu.Unlock()
		if !m.unsettled() {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		}
	}
}

func (m *Manager) unsettled() bool {
	for _, p := range m.Plugins() {
		p.mu.Lock()
		busy := p.restarting || (p.watch != nil && p.watch.exited())
		p.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// WaitRestarts waits for in-flight restarts (tests and shutdown).
func (m *Manager) WaitRestarts(timeout time.Duration) {
	done := make(chan struct{})
	go func() { m.restarts.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}
