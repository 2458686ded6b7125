package plugins

import (
	"context"
	"time"
)

// restartAsync stops an unresponsive plugin for real and starts it again.
// Its registrations stay in place while it restarts: calls to it fail with a
// clear error, so a fail-closed hook (pre_tool_call) blocks instead of
// vanishing, and hook order and suppression windows survive. When the new
// process registers exactly what the old one did (the same messages, so the
// same handles) nothing else changes; otherwise its registrations are
// replaced.
func (m *Manager) restartAsync(p *Plugin, reason string) {
	p.mu.Lock()
	if p.builtin != nil || p.restarting {
		p.mu.Unlock()
		return
	}
	p.restarting = true
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
	m.warn("plugin %s: %s; restarting its process", p.Key, reason)
	go func() {
		defer m.restarts.Done()
		defer func() {
			p.mu.Lock()
			p.restarting = false
			p.mu.Unlock()
		}()
		if old != nil {
			// It did not answer in time: no graceful shutdown request, straight to signals.
			old.Kill()
			<-old.Exited()
		}
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed {
			m.withdraw(p)
			return
		}
		m.reg.DiscardPending(p.Key)
		ctx, cancel := context.WithTimeout(context.Background(), registerTimeout)
		defer cancel()
		if err := m.start(ctx, p, nil); err != nil {
			m.withdraw(p)
			p.setError("restart failed: " + err.Error())
			m.warn("plugin %s: restart failed: %v", p.Key, err)
			return
		}
		m.mu.Lock()
		closed = m.closed
		m.mu.Unlock()
		if closed {
			if proc := p.process(); proc != nil {
				proc.Stop(context.Background())
			}
			return
		}
		if m.reg.SameAsCommitted(p.Key) {
			m.reg.Resume(p.Key)
			return
		}
		m.withdraw(p)
		m.commit(p)
	}()
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
