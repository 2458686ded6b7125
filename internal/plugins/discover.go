package plugins

// Discovery: config and manifests read, the gate applied, nothing started.

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/runtime/python"
)

// Discover reads config and manifests and applies the gate. It starts no plugin.
func (m *Manager) Discover() error {
	doc := m.opts.Config
	m.opts.Config = nil // a later Discover reads the file again
	if doc == nil {
		var err error
		if doc, err = m.store.Load(); err != nil {
			return err
		}
	}
	settings, warns := config.Plugins(doc)
	m.settings = settings
	for _, w := range warns {
		m.warn("%s", w)
	}
	mem, mwarns := config.Memory(doc)
	for _, w := range mwarns {
		m.warn("%s", w)
	}
	m.reg.Hooks().SetTimeout(settings.HookCallbackTimeout)
	m.timeout.Store(int64(settings.ToolCallTimeout))

	opts := discovery.Options{
		UserDir:    m.opts.Home.PluginsDir(),
		BundledDir: m.opts.Env("HERMES_BUNDLED_PLUGINS"),
	}
	for _, b := range m.opts.Builtins {
		opts.Builtins = append(opts.Builtins, discovery.Builtin{Manifest: b.Manifest, Category: b.Category})
	}
	if discovery.Truthy(m.opts.Env("HERMES_ENABLE_PROJECT_PLUGINS")) && m.opts.Cwd != "" {
		opts.ProjectDir = filepath.Join(m.opts.Cwd, ".hermes", "plugins")
	}
	info, pyErr := m.py.Info(context.Background())
	if pyErr == nil {
		opts.SitePackages = python.SitePackages(m.opts.Env("PYTHONPATH"), info)
		opts.EntryPointCache = filepath.Join(m.opts.Home.CacheDir(), "entry-points.json")
	}
	cands, dwarns := discovery.Discover(opts)
	if pyErr != nil {
		m.warnUnscannedEntryPoints(cands, settings.Enabled, pyErr)
	}
	debug := discovery.Truthy(m.opts.Env("HERMES_PLUGINS_DEBUG"))
	for _, w := range dwarns {
		if w.Level == discovery.LevelWarning || debug {
			m.warn("%s", w.Message)
		} else {
			m.log.Debug(w.Message)
		}
	}
	read := metadataFiles{}
	gate := discovery.GateConfig{Enabled: settings.Enabled, EnabledSet: settings.EnabledSet, Disabled: settings.Disabled,
		Removed: removals(m.opts.Home.CacheDir(), cands, read), MemoryProvider: mem.Provider,
		ContextEngine: selectedEngine(doc)}
	m.memory = mem
	if mem.Provider != "" && !memoryProviderFound(cands, mem.Provider) {
		m.warn("memory.provider is '%s' but no memory provider of that name is installed (looked for plugins/memory/%s in the bundled, user and project plugin dirs and the %s entry points); using the built-in memory only. See `hermes memory status`.",
			mem.Provider, mem.Provider, discovery.EntryPointMemoryGroup)
	}
	safe := m.SafeMode()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plugins = map[string]*Plugin{}
	m.sorted = m.sorted[:0]
	m.metadata = read
	for _, c := range cands {
		c = m.bundledUnlessActive(c, gate)
		p := &Plugin{Key: c.Key, Candidate: c, Decision: discovery.Decide(c, gate), Status: discovery.ListStatus(c, gate), reg: m.reg}
		if r, ok := gate.Removed[c.Key]; ok {
			p.Removal = &r
		}
		p.session = m.host.Session(caller{m: m, p: p})
		if safe && (p.Decision.Load || p.Decision.Deferred) && !(c.Builtin && c.Category == discovery.CategoryModelProvider) {
			// hermes' own provider profiles (exempt) run no plugin code:
			// without them safe mode could not reach a model. Upstream skips plugin loading entirely in safe mode; list still shows state.
			p.Decision = discovery.Decision{Status: p.Decision.Status, Error: safeModeError}
		}
		p.Runtime = runtimeOf(c)
		m.plugins[c.Key] = p
		m.sorted = append(m.sorted, p)
	}
	sort.Slice(m.sorted, func(i, j int) bool { return m.sorted[i].Key < m.sorted[j].Key })
	return nil
}

// bundledUnlessActive is c, or the compiled-in provider profile of c's key
// when c is a user or project model provider that will not load: an inactive
// copy must not take away a provider hermes has (upstream: an *active* user
// provider overrides the bundled one).
func (m *Manager) bundledUnlessActive(c *discovery.Candidate, gate discovery.GateConfig) *discovery.Candidate {
	if c.Builtin || c.Category != discovery.CategoryModelProvider || discovery.Decide(c, gate).Load {
		return c
	}
	for _, b := range m.opts.Builtins {
		if b.Manifest != nil && b.Key() == c.Key {
			m.log.Debug("model provider not enabled; the bundled profile of its key stays", "plugin", c.Key, "dir", c.Dir)
			return &discovery.Candidate{Key: c.Key, Manifest: b.Manifest, Source: discovery.SourceBundled, Builtin: true, Category: b.Category}
		}
	}
	return c
}

// selectedEngine is context.engine when it names a plugin engine ("" for the
// built-in compressor or a value that is not a name; the chat warns about those).
func selectedEngine(doc *config.Doc) string {
	v, _ := doc.Get("context.engine")
	name, _ := v.(string)
	name = strings.TrimSpace(name)
	if name == hostapi.BuiltinContextEngine {
		return ""
	}
	return name
}

// memoryProviderFound reports whether a memory provider called name was discovered.
func memoryProviderFound(cands []*discovery.Candidate, name string) bool {
	for _, c := range cands {
		if c.Category == discovery.CategoryMemory && c.ProviderName() == name {
			return true
		}
		if c.Category == "" && c.Key == name && c.Manifest != nil && c.Manifest.Kind == "exclusive" {
			return true
		}
	}
	return false
}

// MemorySettings returns the memory.* config read by Discover.
func (m *Manager) MemorySettings() config.MemorySettings { return m.memory }

// warnUnscannedEntryPoints explains an enabled plugin that was not found when
// the interpreter could not be run, so pip entry points were not looked for:
// that is the likely reason. Without such a name there is nothing to say (a
// host with only Go plugins needs no Python).
func (m *Manager) warnUnscannedEntryPoints(cands []*discovery.Candidate, enabled []string, err error) {
	found := make(map[string]bool, 2*len(cands))
	for _, c := range cands {
		found[c.Key] = true
		found[c.Key[strings.LastIndexByte(c.Key, '/')+1:]] = true
		if c.Manifest != nil {
			found[c.Manifest.Name] = true
		}
	}
	var missing []string
	for _, name := range enabled {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		m.warn("plugins.enabled lists %s, not found; pip entry-point plugins were not looked for because the Python interpreter could not be run: %v",
			strings.Join(missing, ", "), err)
	}
}

func runtimeOf(c *discovery.Candidate) RuntimeKind {
	switch {
	case c.Builtin:
		return RuntimeBuiltin
	case c.Manifest != nil && c.Manifest.Portable:
		return RuntimePortable
	case c.Manifest != nil && c.Manifest.Runtime == "exec":
		return RuntimeExec
	default:
		return RuntimePython
	}
}

// InstallMetadata returns the install metadata files Discover read, by path (nil
// for a missing or unreadable one), so a caller that needs them too does not
// parse them again. Files it had no reason to read are not in it.
func (m *Manager) InstallMetadata() map[string]*install.Metadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*install.Metadata, len(m.metadata))
	for k, v := range m.metadata {
		out[k] = v
	}
	return out
}
