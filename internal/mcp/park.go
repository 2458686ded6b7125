package mcp

import "context"

// A parked server (wave2 §3.3): after its connect retries are spent its
// tools leave the model's list and a background probe tries it again every
// park interval until it answers or the configuration ends. Only a Manager
// told about changes (Options.ServerChanged) probes: a one-shot command has
// no list to update.

// park marks c parked and starts its probe unless one runs; c.mu is held.
func (c *conn) park() {
	notify := c.m.opts.ServerChanged
	if notify == nil || c.probing {
		return
	}
	c.probing = true
	c.probeGen++
	gen := c.probeGen
	life, name := c.m.lifeContext(), c.srv.Name
	go func() {
		notify(name, false)
		for {
			if err := c.m.opts.Sleep(life, c.m.opts.ParkInterval); err != nil {
				return // Close or Reload
			}
			c.mu.Lock()
			current := c.probing && c.probeGen == gen
			c.mu.Unlock()
			if !current {
				return // a call connected it meanwhile
			}
			if _, err := c.ensureOrProbe(life, true); err == nil || life.Err() != nil {
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
