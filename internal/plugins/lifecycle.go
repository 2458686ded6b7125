package plugins

import (
	"context"
	"time"
)

// restartAsync stops an unresponsive plugin for real and starts it again, replacing
// its registrations. Calls made while it restarts fail with a clear error.
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
		m.withdraw(p)
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), registerTimeout)
		defer cancel()
		if err := m.start(ctx, p, nil); err != nil {
			p.setError("restart failed: " + err.Error())
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
