package mcp

import "context"

// A parked server (wave2 §3.3): after its connect retries are spent its
// tools leave the model's list and a background probe tries it again every
// park interval until it answers or the configuration ends. Only a Manager
// told about changes (Options.ServerChanged) probes: a one-shot command has
// no list to update.

// park marks c parked: its tools leave and the probe starts (unless one
// runs) after the park interval. c.mu is held.
func (c *conn) park() {
	if c.m.opts.ServerChanged == nil || c.probing {
		return
	}
	name, notify := c.srv.Name, c.m.opts.ServerChanged
	c.probe(true, func() { notify(name, false) })
}

// retryInBackground follows a failed first attempt at startup: the connect
// retries go on without holding up the caller (now, unless retrying cannot
// help, then at the park interval). c.mu is held.
func (c *conn) retryInBackground(now bool) {
	if c.m.opts.ServerChanged == nil || c.probing {
		return
	}
	c.probe(!now, func() {})
}

// probe starts the background connects of c: each a full ladder of
// retries, every park interval, until one succeeds (unpark reports it) or
// the configuration ends. c.mu is held.
func (c *conn) probe(waitFirst bool, started func()) {
	c.probing = true
	c.probeGen++
	gen, life := c.probeGen, c.m.lifeContext()
	go func() {
		started()
		for wait := waitFirst; ; wait = true {
			if wait {
				if err := c.m.opts.Sleep(life, c.m.opts.ParkInterval); err != nil {
					return // Close or Reload
				}
			}
			c.mu.Lock()
			current := c.probing && c.probeGen == gen
			c.mu.Unlock()
			if !current {
				return // a call connected it meanwhile
			}
			if _, err := c.connectAs(life, modeProbe); err == nil || life.Err() != nil {
				return
			}
		}
	}()
}

// unpark ends a park after a connect succeeded (a probe's or a call's): the
// server's tools may return. c.mu is held.
func (c *conn) unpark() {
	if !c.probing {
		return
	}
	c.probing = false
	notify, name, life := c.m.opts.ServerChanged, c.srv.Name, c.m.lifeContext()
	go func() {
		// The connect that called unpark still holds c.mu; a listener that
		// asks for the tools at once must find them, so report after it ends.
		c.mu.Lock()
		c.mu.Unlock() //nolint:staticcheck // an empty critical section: waiting for the connect to finish
		if life.Err() == nil {
			notify(name, true)
		}
	}()
}

func (m *Manager) lifeContext() context.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.life
}
