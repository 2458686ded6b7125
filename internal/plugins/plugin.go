package plugins

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Status is a plugin's state as `hermes plugins list` shows it.
type Status = discovery.Status

// Plugin states shown by `hermes plugins list`.
const (
	StatusEnabled    = discovery.StatusEnabled
	StatusDisabled   = discovery.StatusDisabled
	StatusNotEnabled = discovery.StatusNotEnabled
	StatusRemoved    = discovery.StatusRemoved
	StatusActive     = discovery.StatusActive
	StatusInactive   = discovery.StatusInactive
)

// KindOf is the kind a provider category's plugins are listed with ("" for general plugins).
func KindOf(category string) string { return discovery.KindOf(category) }

// RuntimeKind is how a plugin runs.
type RuntimeKind string

// The runtimes.
const (
	RuntimePython  RuntimeKind = "python"  // through the embedded Python bridge
	RuntimeExec    RuntimeKind = "exec"    // any program speaking the protocol
	RuntimeBuiltin RuntimeKind = "builtin" // compiled into hermes, in-process
	// RuntimePortable is a plugin.json package (Agent Plugins v1): no process;
	// its skills register in-process and its MCP servers join the MCP client.
	RuntimePortable RuntimeKind = "portable"
)

// LoadState is where a plugin is in its life in this hermes process, as
// /plugins and `hermes plugins show` report it (Status is the config gate's
// verdict, which says nothing about whether it runs).
type LoadState string

// The load states; see "Crashed plugins come back" in docs/DESIGN.md.
const (
	StateNotLoaded  LoadState = "not_loaded"         // not started: not enabled, deferred, safe mode, or not asked for
	StateLoaded     LoadState = "loaded"             // registered; its registrations are in force
	StateError      LoadState = "error"              // its load failed (register() raised, requires_hermes, ...)
	StateRestarting LoadState = "restarting"         // it stopped answering; its process is being replaced
	StateCrashed    LoadState = "crashed_restarting" // its process ended by itself; it is being started again
	StateFailed     LoadState = "failed"             // it kept ending: hermes gave up restarting it, its registrations fail
)

// Label is the state in words, as /plugins and `plugins show` print it.
func (s LoadState) Label() string {
	switch s {
	case StateNotLoaded:
		return "not loaded"
	case StateCrashed:
		return "crashed, restarting"
	}
	return string(s)
}

// Plugin is one discovered plugin and its lifecycle state.
type Plugin struct {
	Key       string
	Candidate *discovery.Candidate
	Decision  discovery.Decision
	Status    Status
	Runtime   RuntimeKind
	// Removal is set when the catalog's kill list names the plugin (whether or
	// not it was installed with --allow-removed); nil otherwise.
	Removal *discovery.Removal

	reg     *registry.Registry
	session *hostapi.Session

	mu         sync.Mutex
	Loaded     bool
	Error      string
	proc       *runtime.Process
	builtin    *builtinState
	restarting bool
	// restartWhy is why it is being restarted (while restarting); crashed says its
	// process ended by itself rather than being stopped for a timeout; failed is
	// set once hermes gave up restarting it (Error says why).
	restartWhy string
	crashed    bool
	failed     bool
	// restarts counts its restarts in this process, lastRestart says why the last
	// one was needed, and recent holds the restart times the policy still counts.
	restarts    int
	lastRestart string
	recent      []time.Time
	watch       *watch // the exit watch of its current process
	// earlierCommitted is closed once every plugin before this one in load
	// order has committed its registrations (nil outside Load).
	earlierCommitted <-chan struct{}
	// holdWarns is set while Load runs this plugin's register(): its warnings are
	// kept in heldWarns and recorded at its turn to commit, in load order.
	holdWarns bool
	heldWarns []string
}

// Snapshot returns what the plugin registered.
func (p *Plugin) Snapshot() registry.Registered { return p.reg.Snapshot(p.Key) }

// ErrorText is the plugin's load error ("" when none).
func (p *Plugin) ErrorText() string { return p.errorText() }

func (p *Plugin) errorText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Error
}

func (p *Plugin) setError(msg string) {
	p.mu.Lock()
	p.Error = msg
	p.Loaded = false
	p.mu.Unlock()
}

// State is where the plugin is in its life, with a detail: the reason it is
// being restarted, or for StateError and StateFailed the error text.
func (p *Plugin) State() (LoadState, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.failed:
		return StateFailed, p.Error
	case p.restarting && p.crashed:
		return StateCrashed, p.restartWhy
	case p.restarting:
		return StateRestarting, p.restartWhy
	case p.Loaded && p.watch != nil && p.watch.exited():
		// Its exit watch has not taken it up yet; the restart is on its way.
		return StateCrashed, p.watch.proc.EndReason()
	case p.Loaded:
		return StateLoaded, ""
	case p.Error != "":
		return StateError, p.Error
	}
	return StateNotLoaded, ""
}

// Restarts says how often the plugin was restarted in this process and why the
// last restart was needed.
func (p *Plugin) Restarts() (n int, last string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts, p.lastRestart
}

// IsLoaded reports whether register() succeeded.
func (p *Plugin) IsLoaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.Loaded
}

func (p *Plugin) setProcess(proc *runtime.Process) {
	p.mu.Lock()
	p.proc = proc
	p.mu.Unlock()
}

func (p *Plugin) process() *runtime.Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc
}

// Process exposes the running process (nil for builtins or unloaded plugins).
func (p *Plugin) Process() *runtime.Process { return p.process() }

func (p *Plugin) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	proc, restarting, crashed, why := p.proc, p.restarting, p.crashed, p.restartWhy
	failed, errText := p.failed, p.Error
	p.mu.Unlock()
	if proc == nil {
		switch {
		case failed:
			// Said first, so that a fail-closed hook's block message, which is cut
			// at 200 characters, still names the plugin and the way out.
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s is down: %s", p.Key, errText)
		case restarting && crashed:
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s %s and is being restarted; try again in a moment", p.Key, why)
		case restarting:
			return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s is restarting after it stopped answering; try again in a moment", p.Key)
		}
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "plugin %s is not running", p.Key)
	}
	var raw json.RawMessage
	err := proc.Call(ctx, method, params, &raw)
	return raw, err
}

// caller is a plugin as its ctx calls see it (hostapi.Caller).
type caller struct {
	m *Manager
	p *Plugin
}

var _ hostapi.Caller = caller{}

func (c caller) ID() string { return c.p.Key }

func (c caller) Manifest() *manifest.Manifest { return c.p.Candidate.Manifest }

func (c caller) Bundled() bool { return c.p.Candidate.Source == discovery.SourceBundled }

func (c caller) Python() bool { return c.p.Runtime == RuntimePython }

func (c caller) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.p.call(ctx, method, params)
}

func (c caller) Process() *runtime.Process { return c.p.process() }

func (c caller) Restart(reason string) { c.m.restartAsync(c.p, reason) }

func (c caller) Warnf(format string, args ...any) { c.m.warnFor(c.p, format, args...) }

// WaitEarlierCommitted makes a call made during register() wait until the
// plugins before p in load order have committed. Earlier plugins never wait
// for later ones, so this cannot deadlock; ctx bounds it all the same.
func (c caller) WaitEarlierCommitted(ctx context.Context) {
	p := c.p
	p.mu.Lock()
	ch := p.earlierCommitted
	if p.Loaded {
		ch = nil
	}
	p.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
