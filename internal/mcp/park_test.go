package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type change struct {
	server string
	up     bool
}

// parkingManager runs a server that fails to start until marker exists; its
// park waits are released one at a time through the returned channel.
func parkingManager(t *testing.T) (m *Manager, changes chan change, probe chan struct{}, waiting chan struct{}, marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ready")
	srv := &ServerConfig{Name: "flaky", Command: "/bin/sh",
		Args: []string{"-c", `test -f "$0" || exit 3; exec "$1" "$2" serve`, marker, python(t), badServer(t)}}
	m, _ = newTestManager(t, srv)
	changes, probe, waiting = make(chan change, 8), make(chan struct{}), make(chan struct{}, 8)
	m.opts.ParkInterval = time.Hour
	m.opts.ServerChanged = func(s string, up bool) { changes <- change{s, up} }
	m.opts.Sleep = func(ctx context.Context, d time.Duration) error {
		if d != time.Hour {
			return nil // connect backoff: instant
		}
		waiting <- struct{}{}
		select {
		case <-probe:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return m, changes, probe, waiting, marker
}

func nextChange(t *testing.T, changes chan change) change {
	t.Helper()
	select {
	case c := <-changes:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no server change reported")
		return change{}
	}
}

// At startup a server that fails is tried once; the retries go on in the
// background, then every park interval, and its return is reported.
func TestStartupFailureRetriedInBackground(t *testing.T) {
	m, changes, probe, waiting, marker := parkingManager(t)
	ctx := context.Background()
	if errs := m.ConnectAll(ctx, nil); errs["flaky"] == nil {
		t.Fatal("a server that exits at start connected")
	}
	<-waiting           // the background retries failed too; it waits a park interval
	probe <- struct{}{} // the first probe still fails…
	<-waiting           // …and the probe waits again
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	probe <- struct{}{} // the next one connects
	if c := nextChange(t, changes); c != (change{"flaky", true}) {
		t.Fatalf("change %v, want flaky back (a server never offered is not reported parked)", c)
	}
	list, _ := m.ServerModelTools("flaky")
	if len(list) == 0 {
		t.Fatal("the server came back without tools")
	}
	if _, err := m.CallTool(ctx, "flaky", "ok", nil, 0); err != nil {
		t.Fatalf("call after the probe: %v", err)
	}
	select {
	case c := <-changes:
		t.Fatalf("unexpected change %v", c)
	default:
	}
}

// A call whose retries fail parks the server (reported, so its tools leave);
// a call that connects it after the interval ends the park, reported once.
func TestCallParksAndEndsPark(t *testing.T) {
	m, changes, probe, waiting, marker := parkingManager(t)
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "flaky", "ok", nil, 0); err == nil {
		t.Fatal("a server that exits at start answered")
	}
	if c := nextChange(t, changes); c != (change{"flaky", false}) {
		t.Fatalf("change %v, want flaky parked", c)
	}
	<-waiting
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := m.lookup("flaky")
	c.mu.Lock()
	c.parkedUntil = time.Time{} // the interval has passed
	c.mu.Unlock()
	c.br = &breaker{now: m.opts.Now, cooldown: breakerCooldown}
	if _, err := m.CallTool(ctx, "flaky", "ok", nil, 0); err != nil {
		t.Fatalf("call: %v", err)
	}
	if got := nextChange(t, changes); got != (change{"flaky", true}) {
		t.Fatalf("change %v, want flaky back", got)
	}
	probe <- struct{}{}
	select {
	case got := <-changes:
		t.Fatalf("the probe reported again: %v", got)
	case <-time.After(200 * time.Millisecond):
	}
}

// Close ends a waiting probe: its wait returns and it never tries again.
func TestCloseEndsProbe(t *testing.T) {
	m, _, _, waiting, _ := parkingManager(t)
	ended := make(chan error, 1)
	sleep := m.opts.Sleep
	m.opts.Sleep = func(ctx context.Context, d time.Duration) error {
		err := sleep(ctx, d)
		if d == time.Hour {
			ended <- err
		}
		return err
	}
	m.ConnectAll(context.Background(), nil)
	<-waiting
	m.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the probe's wait ended without Close's cancellation")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the probe")
	}
	select {
	case <-waiting:
		t.Fatal("the probe waited again after Close")
	case <-time.After(100 * time.Millisecond):
	}
}
