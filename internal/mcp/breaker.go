package mcp

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Circuit breaker (wave2 §3.3): three consecutive failed calls open it; while
// open, calls fail at once; after the cooldown one call probes (half-open):
// success closes it, failure opens it again.
const (
	breakerThreshold = 3
	breakerCooldown  = 60 * time.Second
)

type breaker struct {
	mu       sync.Mutex
	now      func() time.Time
	cooldown time.Duration
	failures int
	allApp   bool // every failure of the run was a tool-level error (server reachable)
	openedAt time.Time
	open     bool
	probing  bool
}

// allow says whether a call may go ahead; when not, msg is what the caller is told.
func (b *breaker) allow(server string) (ok bool, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return true, ""
	}
	left := b.cooldown - b.now().Sub(b.openedAt)
	if left <= 0 && !b.probing {
		b.probing = true
		return true, ""
	}
	if left < time.Second {
		left = time.Second
	}
	secs := int(math.Ceil(left.Seconds()))
	if b.allApp {
		return false, fmt.Sprintf("MCP server '%s' rejected the last %d calls (it is reachable; the calls themselves failed). "+
			"Paused for ~%ds. Do NOT repeat the same call; change the arguments or ask the user.", server, b.failures, secs)
	}
	return false, fmt.Sprintf("MCP server '%s' is unreachable after %d consecutive failures. "+
		"Auto-retry available in ~%ds. Do NOT retry this tool yet; use another approach or tell the user.", server, b.failures, secs)
}

// record notes how a call that allow let through ended. application marks a
// tool-level error: the server answered, the call failed.
func (b *breaker) record(success, application bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if success {
		b.failures, b.open, b.probing, b.allApp = 0, false, false, false
		return
	}
	if b.failures == 0 {
		b.allApp = true
	}
	b.failures++
	b.allApp = b.allApp && application
	if b.probing || b.failures >= breakerThreshold {
		b.open, b.probing, b.openedAt = true, false, b.now()
	}
}

func (b *breaker) state() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.open && b.now().Sub(b.openedAt) >= b.cooldown:
		return "half-open"
	case b.open:
		return "open"
	}
	return "closed"
}
