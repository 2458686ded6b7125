package app

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins"

	"github.com/hermes-go/hermes/internal/memory"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// Memory: the built-in store and its tool exist in every command (so there is
// something to recall without any plugin); the external provider memory.provider
// selects is attached once the plugins have loaded (attachMemory).

// newMemory builds the command's memory manager and registers the memory tool.
func (h *Host) newMemory() error {
	settings := h.m.MemorySettings()
	h.memory = memory.New(memory.Options{
		Store:      memory.NewStore(filepath.Join(h.home.Dir, "memories"), settings),
		Settings:   settings,
		HermesHome: h.home.Dir,
		Platform:   "cli",
		Logger:     h.f.Logger(),
		Warn:       h.f.Warn,
		Redact:     h.f.Redactor().String,
	})
	return memory.RegisterTool(h.Registry.Tools(), h.memory)
}

// Memory is the command's memory manager.
func (h *Host) Memory() *memory.Manager { return h.memory }

// MemoryProvider finds the registration of the selected memory provider
// among what the loaded plugins registered: the one of the plugin found as
// plugins/memory/<name> (or a flat plugin of that key), else any provider
// registered under that name.
func (h *Host) MemoryProvider(name string) (*memory.Remote, bool) {
	if name == "" {
		return nil, false
	}
	var byName *registry.Provider
	for _, p := range h.Registry.Providers(registry.MemoryProvider) {
		if p.Conn == nil {
			continue
		}
		if p.Plugin == "memory/"+name || p.Plugin == name {
			return newRemoteMemory(p), true
		}
		if p.Name == name && byName == nil {
			byName = &p
		}
	}
	if byName != nil {
		return newRemoteMemory(*byName), true
	}
	return nil, false
}

// newRemoteMemory is the provider behind a registration; the hooks its class
// inherits (no-ops, as the Python bridge reported) cost no round trip.
func newRemoteMemory(p registry.Provider) *memory.Remote {
	r := &memory.Remote{ProviderName: p.Name, Conn: p.Conn}
	r.AfterTurnCall, _ = p.Details["after_turn"].(bool)
	for _, m := range detailStrs(p.Details, "inherited") {
		if r.Inherited == nil {
			r.Inherited = map[string]bool{}
		}
		r.Inherited[m] = true
	}
	return r
}

// attachMemory makes the selected provider the chat's external memory and,
// when the memory toolset is enabled, offers its tools. It reports whether a
// provider is active.
func (h *Host) attachMemory(ctx context.Context) bool {
	name := h.m.MemorySettings().Provider
	if name == "" {
		return false
	}
	if _, found := h.m.Plugin("memory/" + name); !found {
		if _, flat := h.m.Plugin(name); !flat {
			return false // discovery already said it is not installed
		}
	}
	r, ok := h.MemoryProvider(name)
	if !ok {
		h.f.Warn("memory provider " + termsafe.Line(name) + " is selected (memory.provider) but did not register a provider (did its plugin fail to load? see `hermes memory status`); using the built-in memory only")
		return false
	}
	h.memory.SetExternal(r)
	if !h.tools.allows(&tools.Tool{Toolset: memory.Toolset}) {
		h.f.Logger().Info("memory toolset not enabled: the memory provider's tools and prompt block are withheld", "provider", name)
		return true
	}
	for _, t := range h.memory.ProviderTools(ctx) {
		if err := h.Registry.Tools().Register(t, false); err != nil {
			h.f.Warn("memory provider " + termsafe.Line(name) + ": tool " + termsafe.Line(t.Name) + " not offered: " + termsafe.Line(err.Error()))
		}
	}
	return true
}

// memoryToolsOn reports whether the memory toolset is enabled in this command.
func (h *Host) memoryToolsOn() bool { return h.tools.allows(&tools.Tool{Toolset: memory.Toolset}) }

// LoadMemoryProvider starts the memory provider plugin called name alone,
// selected or not (`hermes memory setup` asks it for its config schema), and
// returns its provider.
func (h *Host) LoadMemoryProvider(ctx context.Context, name string) (*memory.Remote, error) {
	p, ok := h.m.Plugin("memory/" + name)
	if !ok {
		return nil, Failf("no memory provider '%s' is installed (%s); put it in %s/memory/%s/ or pip-install it",
			termsafe.Line(name), h.installedProviders(), h.home.PluginsDir(), termsafe.Line(name))
	}
	if p.Decision.Status == "disabled" {
		return nil, Failf("memory provider '%s' is disabled in plugins.disabled; remove it from there first", name)
	}
	p.Decision.Load, p.Decision.Error = true, ""
	if err := h.m.Load(ctx, func(q *plugins.Plugin) bool { return q == p }); err != nil {
		return nil, err
	}
	h.FlushWarnings()
	if e := p.ErrorText(); e != "" {
		return nil, Failf("memory provider '%s' failed to load: %s", name, termsafe.Text(e))
	}
	r, ok := h.MemoryProvider(name)
	if !ok {
		return nil, Failf("plugin memory/%s loaded but registered no memory provider (register(ctx) must call ctx.register_memory_provider(provider), or the module must define a MemoryProvider subclass)", name)
	}
	return r, nil
}

// MemoryProviders are the installed memory provider plugins, sorted by key.
func (h *Host) MemoryProviders() []*plugins.Plugin {
	var out []*plugins.Plugin
	for _, p := range h.m.Plugins() {
		if p.Candidate.Category == "memory" {
			out = append(out, p)
		}
	}
	return out
}

func (h *Host) installedProviders() string {
	var names []string
	for _, p := range h.MemoryProviders() {
		names = append(names, p.Candidate.ProviderName())
	}
	if len(names) == 0 {
		return "none is installed"
	}
	return "installed: " + strings.Join(names, ", ")
}

// MemorySettings is the memory section of config.yaml as discovery read it.
func (h *Host) MemorySettings() config.MemorySettings { return h.m.MemorySettings() }
