// Package plugins is the plugin manager, which owns the plugins' lifecycle:
// discover → gate → order → start → commit → stop. What plugins register lives
// in package registry; their ctx calls are served by package hostapi; their
// processes by package runtime.
package plugins

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/plugins/runtime/python"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Builtin is a Go plugin compiled into hermes; it registers in-process through the
// same pluginsdk.Context interface that out-of-process Go plugins use.
type Builtin struct {
	Manifest *manifest.Manifest
	Plugin   pluginsdk.Plugin
	Category string // provider sub-category (model-providers), "" for a general plugin
}

// Key is the plugin's registry key, as discovery gives it.
func (b Builtin) Key() string {
	if b.Category != "" {
		return b.Category + "/" + b.Manifest.Name
	}
	return b.Manifest.Name
}

// Options configure a Manager.
type Options struct {
	Home home.Home
	Env  func(string) string
	// Environ is the process environment plugin processes inherit (with
	// $HERMES_HOME/.env over it); nil: none.
	Environ     func() []string
	Cwd         string
	HostVersion string
	Builtins    []Builtin
	// Sink receives plugin stdout/stderr lines and log records (see NewLineWriter).
	Sink   runtime.LineSink
	Logger *slog.Logger
	// Config is config.yaml as the caller just parsed it, so the first Discover does not
	// read and parse the file again (nil: Discover reads it).
	Config *config.Doc
	// Registry receives what plugins register (nil: a new one).
	Registry *registry.Registry
	// Approver answers approval requests raised by pre_tool_call hooks of the
	// tool calls plugins dispatch (nil: nobody).
	Approver tools.Approver
	// Tools runs ctx.dispatch_tool calls (nil: the tool pipeline over Registry).
	Tools hostapi.ToolRunner
	// Agent serves ctx.inject_message and ctx.llm (nil: unavailable).
	Agent hostapi.AgentServices
	// MCP serves ctx.call_mcp: the one MCP client (nil: no MCP server is configured).
	MCP hostapi.MCPCaller
	// Gateway serves ctx.platform_actions and gateway-mode inject_message
	// while a gateway runs (nil: never).
	Gateway hostapi.GatewayServices
	// StallOut is where stall reports go (HERMES_DEBUG_STALL; nil: nowhere).
	StallOut io.Writer
	// Restart is how a plugin whose process went away is restarted (zero: DefaultRestartPolicy).
	Restart RestartPolicy
	// Clock reads the time the restart policy counts with (nil: clock.Now).
	Clock func() time.Time
	// Reaper contains every plugin process and what it starts (nil: process
	// groups only).
	Reaper *reaper.Reaper
}

// Manager owns the plugins of one HERMES_HOME.
type Manager struct {
	opts  Options
	store config.Store
	log   *slog.Logger
	reg   *registry.Registry
	host  *hostapi.Host
	stall *runtime.StallReporter
	py    *python.Launcher

	mu       sync.Mutex
	plugins  map[string]*Plugin
	sorted   []*Plugin
	warnings []string
	settings config.PluginSettings
	memory   config.MemorySettings
	metadata metadataFiles   // install metadata Discover read (see InstallMetadata)
	loading  map[string]bool // keys being loaded right now (answers has_plugin during register)
	live     bool            // Load has finished: warnings are logged, not kept (see warn)
	envOnce  sync.Once
	env      []string     // plugin processes' environment without HERMES_HOME (see pluginEnv)
	timeout  atomic.Int64 // plugins.tool_call_timeout
	closed   bool
	closing  chan struct{} // closed when Close begins: pending restarts give up
	restarts sync.WaitGroup
	watchers sync.WaitGroup // exit watches of plugin processes (see watchProcess)
	settle   chan struct{}  // closed and replaced whenever a restart or exit is settled
}

// New creates a manager; call Discover, then Load.
func New(opts Options) *Manager {
	if opts.Env == nil {
		opts.Env = func(string) string { return "" }
	}
	if opts.Environ == nil {
		opts.Environ = func() []string { return nil }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Now
	}
	m := &Manager{
		opts:    opts,
		closing: make(chan struct{}),
		settle:  make(chan struct{}),
		store:   config.Store{Path: opts.Home.ConfigPath(), PluginsDir: opts.Home.PluginsDir()},
		log:     opts.Logger,
		reg:     opts.Registry,
		plugins: map[string]*Plugin{},
	}
	if m.reg == nil {
		m.reg = registry.New(registry.Options{Logger: m.log, Warn: m.warn})
	}
	tr := opts.Tools
	if tr == nil {
		tr = &tools.Pipeline{Registry: m.reg.Tools(), Hooks: m.reg.Hooks(), Approver: opts.Approver, Middleware: m.reg.ToolMiddleware()}
	}
	stallDir := opts.Env("HERMES_DEBUG_STALL")
	m.stall = &runtime.StallReporter{
		Enabled: discovery.Truthy(stallDir) || filepath.IsAbs(stallDir),
		LogsDir: opts.Home.LogsDir(),
		Out:     opts.StallOut,
	}
	if filepath.IsAbs(stallDir) {
		m.stall.KeepDir = stallDir
	}
	if m.stall.Out == nil {
		m.stall.Out = io.Discard
	}
	m.py = python.New(python.Options{
		Configured: func() string { return m.Settings().Python }, Env: opts.Env,
		CacheDir: opts.Home.CacheDir(), Cwd: opts.Cwd, Sink: opts.Sink, Logger: m.log,
		PluginEnv: m.pluginEnv, NoForkServer: discovery.Truthy(opts.Env("HERMES_NO_FORKSERVER")),
		Reaper: opts.Reaper,
	})
	m.host = hostapi.New(hostapi.Options{
		Registry: m.reg, Store: m.store, Home: opts.Home, Logger: m.log, Sink: opts.Sink,
		Plugins: m, Tools: tr, Agent: opts.Agent, MCP: opts.MCP, Gateway: opts.Gateway, Stalls: m.stall, Warn: m.warn,
		ToolCallTimeout: func() time.Duration { return time.Duration(m.timeout.Load()) },
	})
	return m
}

// Registry is what the plugins registered.
func (m *Manager) Registry() *registry.Registry { return m.reg }

// Home is the manager's HERMES_HOME.
func (m *Manager) Home() home.Home { return m.opts.Home }

// Store is the config.yaml store.
func (m *Manager) Store() config.Store { return m.store }

// Warnings are the discovery and load warnings collected so far.
func (m *Manager) Warnings() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.warnings...)
}

// warn records a warning for the user. Until Load has finished, warnings are
// kept for Warnings (the CLI shows discovery's and loading's together, once);
// after that, a warning (a restart, a late registration clash) goes straight
// to the logger, because nobody collects them in the middle of a session.
func (m *Manager) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	m.mu.Lock()
	live := m.live
	if !live {
		m.warnings = append(m.warnings, msg)
	}
	m.mu.Unlock()
	if live {
		m.log.Warn(msg)
	}
}

// warnFor records a warning about p. While Load runs p's register() (plugins
// register in parallel) the warning is held with p and recorded at p's turn to
// commit, so load-time warnings come out in load order, run after run.
func (m *Manager) warnFor(p *Plugin, format string, args ...any) {
	p.mu.Lock()
	if p.holdWarns {
		p.heldWarns = append(p.heldWarns, fmt.Sprintf(format, args...))
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	m.warn(format, args...)
}

// loadingPlugin reports whether key is a plugin of the Load in progress.
func (m *Manager) loadingPlugin(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loading[key]
}

// releaseWarns records p's held warnings and stops holding them.
func (m *Manager) releaseWarns(p *Plugin) {
	p.mu.Lock()
	held := p.heldWarns
	p.holdWarns, p.heldWarns = false, nil
	p.mu.Unlock()
	for _, w := range held {
		m.warn("%s", w)
	}
}

// Settings returns the plugins.* config read by Discover.
func (m *Manager) Settings() config.PluginSettings { return m.settings }

// Plugins returns every discovered plugin, sorted by key.
func (m *Manager) Plugins() []*Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Plugin(nil), m.sorted...)
}

// Plugin returns the plugin with key.
func (m *Manager) Plugin(key string) (*Plugin, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plugins[key]
	return p, ok
}

// Resolve finds a plugin by key, manifest name or unique leaf name.
func (m *Manager) Resolve(name string) (*Plugin, error) {
	m.mu.Lock()
	cands := make([]*discovery.Candidate, 0, len(m.sorted))
	for _, p := range m.sorted {
		cands = append(cands, p.Candidate)
	}
	m.mu.Unlock()
	c, err := discovery.ResolveName(cands, name)
	if err != nil {
		return nil, err
	}
	p, _ := m.Plugin(c.Key)
	return p, nil
}

// safeModeError is the load error of every plugin while HERMES_SAFE_MODE is on.
const safeModeError = "not loaded: safe mode is on (HERMES_SAFE_MODE); unset it to load plugins"

// SafeMode reports whether HERMES_SAFE_MODE is on: plugins are discovered and listed
// but none is loaded, so no plugin code runs.
func (m *Manager) SafeMode() bool {
	return discovery.Truthy(m.opts.Env("HERMES_SAFE_MODE"))
}

// LoadFilter selects which gated-in plugins Load starts (nil: all of them).
type LoadFilter func(*Plugin) bool

// Load starts every plugin the gate lets through (and the filter keeps), runs their
// register(), and commits what they registered in load order. Plugins start in
// parallel; one failing never stops the others. Builtins register in-process.
func (m *Manager) Load(ctx context.Context, filter LoadFilter) error {
	if m.SafeMode() {
		m.warn("HERMES_SAFE_MODE is on: plugin loading skipped, no plugin was started")
		// Only hermes' own provider profiles, which are no plugin code.
		inner := filter
		filter = func(p *Plugin) bool {
			return p.Candidate.Builtin && p.Candidate.Category == discovery.CategoryModelProvider && (inner == nil || inner(p))
		}
	}
	var toLoad []*discovery.Candidate
	m.mu.Lock()
	var noTools []*Plugin
	var removed []*Plugin
	gate := discovery.GateConfig{Enabled: m.settings.Enabled, EnabledSet: m.settings.EnabledSet}
	for _, p := range m.sorted {
		if p.Decision.Status == discovery.StatusRemoved && discovery.EnabledByConfig(p.Candidate, gate) && (filter == nil || filter(p)) {
			removed = append(removed, p)
		}
		if !p.Decision.Starts() || p.Loaded || p.Error != "" {
			continue
		}
		if filter != nil && !filter(p) {
			continue
		}
		if !p.Decision.Load && !hasToolsModule(p) {
			noTools = append(noTools, p)
			continue
		}
		toLoad = append(toLoad, p.Candidate)
	}
	m.mu.Unlock()
	for _, p := range removed {
		// Enabled, yet it does not load: say why, or its tools would just vanish.
		m.warn("plugin %s was not loaded: it was %s (see hermes plugins show %s)", p.Key, p.Decision.Error, p.Key)
	}
	for _, p := range noTools {
		// A bundled plugin the user cannot fix: logged, and explained by `plugins show`.
		m.log.Debug("deferred platform plugin declares provides_tools but has no tools.py; its tools wait for a gateway",
			"plugin", p.Key, "tools", strings.Join(p.Candidate.Manifest.ProvidesTools, ", "))
	}
	order, owarns := discovery.LoadOrder(toLoad)
	for _, w := range owarns {
		m.warn("%s", w)
	}
	var ready []*Plugin
	for _, c := range order {
		p, _ := m.Plugin(c.Key)
		if spec := c.Manifest.RequiresHermes; spec != "" {
			if err := manifest.CheckRequiresHermes(spec, m.opts.HostVersion); err != nil {
				p.setError(err.Error())
				continue
			}
		}
		// config_schema mismatches only warn, as upstream's: the plugin loads.
		for _, w := range manifest.ValidateSettings(c.Manifest.ConfigSchema, manifest.EntrySettings(m.settings.Entries[c.Key]), c.Key) {
			m.warn("%s", w)
		}
		ready = append(ready, p)
	}
	m.mu.Lock()
	m.loading = map[string]bool{}
	for _, p := range ready {
		m.loading[p.Key] = true
		if p.Candidate.Manifest != nil && p.Candidate.Manifest.Name != "" {
			m.loading[p.Candidate.Manifest.Name] = true
		}
	}
	m.mu.Unlock()

	// Processes start and register() in parallel, with two orderings kept from
	// upstream's sequential load: what plugins registered is committed in load order
	// (so hook order and tool name clashes are deterministic), and a plugin's
	// register() runs only once every plugin it requires (requires_plugins) has
	// registered and been committed. Only dependencies earlier in the load order are
	// waited for, so a cycle (already warned about) cannot deadlock.
	committed := make([]chan struct{}, len(ready))
	index := make(map[*Plugin]int, len(ready))
	none := make(chan struct{})
	close(none)
	for i, p := range ready {
		committed[i] = make(chan struct{})
		index[p] = i
		p.mu.Lock()
		p.earlierCommitted = none
		p.holdWarns = true
		if i > 0 {
			p.earlierCommitted = committed[i-1]
		}
		p.mu.Unlock()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, p := range ready {
		var deps []chan struct{}
		for _, d := range ready[:i] {
			if requires(p, d) {
				deps = append(deps, committed[index[d]])
			}
		}
		wg.Add(1)
		go func(i int, p *Plugin, deps []chan struct{}) {
			defer wg.Done()
			defer close(committed[i])
			func() {
				// The semaphore bounds concurrent start-ups; it is given back before
				// waiting for dependencies, so waiting plugins never starve those.
				sem <- struct{}{}
				held := true
				defer func() {
					if held {
						<-sem
					}
				}()
				waitDeps := func() {
					<-sem
					held = false
					for _, d := range deps {
						<-d
					}
				}
				if err := m.start(ctx, p, waitDeps); err != nil {
					p.setError(err.Error())
				}
			}()
			if i > 0 {
				<-committed[i-1]
			}
			m.releaseWarns(p)
			if p.errorText() != "" {
				m.reg.DiscardPending(p.Key)
				return
			}
			m.commit(p)
			m.watchProcess(p, p.process())
		}(i, p, deps)
	}
	wg.Wait()
	m.mu.Lock()
	m.loading = nil
	m.live = true
	m.mu.Unlock()
	m.rememberCLICommands(ready)
	return nil
}

// hasToolsModule reports whether a deferred platform plugin can register its tools
// now: a Python plugin with a tools.py (upstream imports nothing else of it).
func hasToolsModule(p *Plugin) bool {
	if p.Runtime != RuntimePython || p.Candidate.Dir == "" {
		return false
	}
	st, err := os.Stat(filepath.Join(p.Candidate.Dir, "tools.py"))
	return err == nil && st.Mode().IsRegular()
}

// requires reports whether p names d in requires_plugins (by key or manifest name).
func requires(p, d *Plugin) bool {
	if p.Candidate.Manifest == nil {
		return false
	}
	for _, r := range p.Candidate.Manifest.RequiresPlugins {
		if r.ID == d.Key || (d.Candidate.Manifest != nil && r.ID == d.Candidate.Manifest.Name) {
			return true
		}
	}
	return false
}

// start launches one plugin and runs its register(); waitDeps (may be nil) blocks
// until the plugins it requires have registered.
func (m *Manager) start(ctx context.Context, p *Plugin, waitDeps func()) error {
	c := p.Candidate
	if c.Builtin {
		if waitDeps != nil {
			waitDeps()
		}
		return m.startBuiltin(ctx, p)
	}
	if p.Runtime == RuntimePortable {
		if waitDeps != nil {
			waitDeps()
		}
		return m.startPortable(p)
	}
	info := protocol.PluginInfo{
		ID: c.Key, Name: c.Manifest.Name, Dir: c.Dir, Source: string(c.Source), Kind: c.Manifest.Kind, Category: c.Category,
		Manifest: manifestForPlugin(c.Manifest),
	}
	if c.EntryPoint != nil {
		info.Module = c.EntryPoint.Value
	}
	spec := runtime.Spec{
		Init: protocol.InitializeParams{
			HostVersion: m.opts.HostVersion, Plugin: info,
			HermesHome: m.opts.Home.Dir, ProfileName: m.opts.Home.Profile,
		},
		Runtime: string(p.Runtime),
		Command: c.Manifest.Command,
		Env:     m.pluginEnv(),
		WorkDir: m.opts.Cwd,
	}
	rtOpts := runtime.Options{Sink: m.opts.Sink, Reaper: m.opts.Reaper}
	var rt runtime.Runtime
	switch p.Runtime {
	case RuntimeExec:
		spec.WorkDir = ""
		rt = &runtime.Exec{Options: rtOpts}
	default:
		var err error
		if rt, err = m.py.Runtime(ctx, rtOpts); err != nil {
			return err
		}
	}
	proc, _, err := rt.Start(ctx, spec, p.session.Handler())
	if err != nil {
		return err
	}
	p.setProcess(proc)
	if waitDeps != nil {
		waitDeps()
	}
	rctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	var params protocol.RegisterParams
	if !p.Decision.Load {
		params.Entry = protocol.RegisterEntryTools // EagerTools: see hasToolsModule
	}
	if err := proc.Call(rctx, protocol.MethodRegister, params, nil); err != nil {
		proc.Stop(context.Background())
		p.setProcess(nil)
		return m.registerError(p, err)
	}
	return nil
}

// registerTimeout bounds import + register(); a plugin stuck there is stopped.
const registerTimeout = 60 * time.Second

// Close stops every plugin process (running on_unload callbacks first).
func (m *Manager) Close(ctx context.Context) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.closing)
	m.mu.Unlock()
	m.WaitRestarts(10 * time.Second)
	m.mu.Lock()
	procs := []*runtime.Process{}
	for _, p := range m.sorted {
		if proc := p.process(); proc != nil {
			procs = append(procs, proc)
		}
	}
	m.mu.Unlock()
	// Events already emitted reach their subscribers before the plugins stop.
	m.host.Close()
	var wg sync.WaitGroup
	for _, proc := range procs {
		wg.Add(1)
		go func(proc *runtime.Process) {
			defer wg.Done()
			proc.Stop(ctx)
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			proc.WaitOutput(wctx)
			cancel()
		}(proc)
	}
	wg.Wait()
	m.watchers.Wait() // every process has exited: the watches end at once
	m.py.Close()
	m.runBuiltinUnload()
}

// Loading reports whether key is a plugin of the Load in progress.
func (m *Manager) Loading(key string) bool { return m.loadingPlugin(key) }

// HasPlugin answers ctx.has_plugin: a plugin loaded and enabled, by key or name.
func (m *Manager) HasPlugin(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loading[name] {
		return true
	}
	for _, p := range m.sorted {
		if p.Key != name && (p.Candidate.Manifest == nil || p.Candidate.Manifest.Name != name) {
			continue
		}
		if p.Loaded && p.Error == "" {
			return true
		}
	}
	return false
}

// commit makes what p registered visible to the consumers, in load order.
func (m *Manager) commit(p *Plugin) {
	m.reg.Commit(p.Key)
	p.mu.Lock()
	p.Loaded = true
	p.Error = ""
	p.mu.Unlock()
}

// withdraw undoes every registration p committed.
func (m *Manager) withdraw(p *Plugin) {
	m.reg.Withdraw(p.Key)
	p.mu.Lock()
	p.Loaded = false
	p.mu.Unlock()
}
