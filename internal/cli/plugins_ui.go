package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/pluginsui"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// The interactive `hermes plugins` screen (wave2 §5): general plugins as
// checkboxes, then one row per provider slot opening a radio picker.

// providerCatalog is what the pickers offer besides the built-in choice. The
// memory providers and context engines hermes can run come from discovery;
// this is the seam the sub-category discoveries (plugins/memory/<name>/,
// plugins/context_engine/<name>/) fill.
type providerCatalog interface {
	MemoryProviders() []pluginsui.Choice
	ContextEngines() []pluginsui.Choice
}

// discoveredProviders reads the catalog off discovery: memory providers are
// plugins/memory/<name>/ and entry-point providers, and flat plugins of kind
// "exclusive" (upstream's memory-provider marker); context engines are
// plugins/context_engine/<name>/ plugins and any engine a loaded general plugin
// registered (upstream's "installed plugin"). Each choice's name is what its
// setting holds: the directory or entry-point name, not the "<category>/" key.
// The provider categories, as discovery spells them (plugins.go's
// providerNotEnableable reads them too).
const (
	categoryMemory        = "memory"
	categoryContextEngine = "context_engine"
)

type discoveredProviders struct {
	plugins []*plugins.Plugin
	engines []registry.Provider // engines registered by general plugins
}

func (c discoveredProviders) MemoryProviders() []pluginsui.Choice {
	return c.choices(func(p *plugins.Plugin) bool {
		return p.Candidate.Category == categoryMemory ||
			(p.Candidate.Category == "" && isMemoryProvider(p))
	}, nil)
}

func (c discoveredProviders) ContextEngines() []pluginsui.Choice {
	var extra []pluginsui.Choice
	for _, e := range c.engines {
		if !strings.HasPrefix(e.Plugin, categoryContextEngine+"/") {
			extra = append(extra, pluginsui.Choice{Name: e.Name, Description: "installed plugin"})
		}
	}
	return c.choices(func(p *plugins.Plugin) bool { return p.Candidate.Category == categoryContextEngine }, extra)
}

// choices are the plugins that match, by name, sorted; a later one of a name
// (a flat plugin beside a memory/<name> one) is dropped.
func (c discoveredProviders) choices(match func(*plugins.Plugin) bool, extra []pluginsui.Choice) []pluginsui.Choice {
	var out []pluginsui.Choice
	seen := map[string]bool{}
	add := func(ch pluginsui.Choice) {
		if !seen[ch.Name] {
			seen[ch.Name] = true
			out = append(out, ch)
		}
	}
	for _, p := range c.plugins {
		if p.Candidate == nil || !match(p) || killed(p) {
			continue
		}
		desc := ""
		if p.Candidate.Manifest != nil {
			desc = p.Candidate.Manifest.Description
		}
		add(pluginsui.Choice{Name: p.Candidate.ProviderName(), Description: desc})
	}
	for _, ch := range extra {
		add(ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isMemoryProvider(p *plugins.Plugin) bool {
	return p.Candidate.Manifest != nil && p.Candidate.Manifest.Kind == "exclusive"
}

// slotSpec is one provider row: its config key and built-in choice.
type slotSpec struct {
	title, key, defaultLabel, defaultValue string
	choices                                func(providerCatalog) []pluginsui.Choice
}

var slotSpecs = []slotSpec{
	{"Memory Provider", "memory.provider", "built-in", "", providerCatalog.MemoryProviders},
	{"Context Engine", "context.engine", "compressor", "compressor", providerCatalog.ContextEngines},
}

// configString is a string setting as the screen shows it: def when missing or
// null, and a value of another type (a hand-edited list, a number) as its YAML
// text, which no choice matches, so the picker offers it "(not found)" and a
// pick replaces it.
func configString(d *config.Doc, key, def string) string {
	v, ok := d.Get(key)
	switch s := v.(type) {
	case string:
		return s
	case nil:
		return def
	default:
		if !ok {
			return def
		}
		return fmt.Sprint(s)
	}
}

func providerSlots(d *config.Doc, cat providerCatalog) []pluginsui.Slot {
	slots := make([]pluginsui.Slot, len(slotSpecs))
	for i, s := range slotSpecs {
		slots[i] = pluginsui.Slot{Title: s.title, DefaultLabel: s.defaultLabel, DefaultValue: s.defaultValue,
			Current: configString(d, s.key, s.defaultValue), Choices: s.choices(cat)}
	}
	return slots
}

// screenPlugins are the general plugin rows, by key: every discovered plugin
// but memory providers and context engines (they have their pickers) and
// plugins the catalog's kill list keeps from loading (checking one would
// change nothing). Model providers are rows: plugins.enabled loads them.
func screenPlugins(all []*plugins.Plugin) ([]*plugins.Plugin, []pluginsui.Plugin) {
	var ps []*plugins.Plugin
	var rows []pluginsui.Plugin
	for _, p := range all {
		// Memory providers and context engines have their pickers:
		// plugins.enabled does nothing for them.
		if (p.Candidate.Category != "" && p.Candidate.Category != "model-providers") || isMemoryProvider(p) || killed(p) {
			continue
		}
		// hermes' own provider profiles are always there, like the built-in
		// tools: `hermes plugins list` shows them, `plugins disable` drops one.
		if p.Candidate.Builtin && p.Candidate.Category == "model-providers" {
			continue
		}
		mf := p.Candidate.Manifest
		name, desc := p.Key, ""
		if mf != nil {
			name, desc = mf.Name, mf.Description
		}
		ps = append(ps, p)
		// Checked as the gate decides, so a bundled plugin that loads by
		// default shows checked and is not turned off by opening the screen.
		rows = append(rows, pluginsui.Plugin{Key: p.Key, Name: name, Description: desc,
			Bundled: p.Candidate.Source == "bundled", Checked: p.Status == plugins.StatusEnabled})
	}
	return ps, rows
}

// pluginsScreenRun is `hermes plugins` with no action.
func pluginsScreenRun(ctx context.Context, f *app.Factory) error {
	if !f.IO.CanPrompt() {
		// Upstream's words and its exit code (0).
		fmt.Fprintln(f.IO.Out, "Interactive mode requires a terminal.")
		fmt.Fprintln(f.IO.Out, "Use: hermes plugins list | enable NAME | disable NAME | show NAME")
		return nil
	}
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	store := h.Store()
	d, err := store.Load()
	if err != nil {
		return err
	}
	ps, rows := screenPlugins(h.Plugins())
	m := pluginsui.New(rows, providerSlots(d, discoveredProviders{plugins: h.Plugins(), engines: h.Registry.Providers(registry.ContextEngine)}), func(i int, value string) error {
		return store.Update(ctx, func(d *config.Doc) error { return d.Set(slotSpecs[i].key, value) })
	})
	h.FlushWarnings()
	if err := pluginsui.Run(ctx, m, f.IO.In, f.IO.Out, f.Environ()); err != nil {
		return err
	}
	out := f.IO.Out
	if m.Outcome() == pluginsui.Interrupted {
		fmt.Fprintln(out, "\nInterrupted: general plugin changes were not saved.")
		return app.SilentExit(app.ExitInterrupted)
	}
	checked := m.Checked()
	changed, newly, err := persistSelection(ctx, store, ps, checked)
	if err != nil {
		return err
	}
	n := 0
	for _, c := range checked {
		if c {
			n++
		}
	}
	switch {
	case changed:
		fmt.Fprintf(out, "\n✓ General plugins: %d enabled, %d disabled.\n", n, len(checked)-n)
	case len(rows) > 0:
		fmt.Fprintln(out, "\nGeneral plugins unchanged.")
	}
	if m.ProvidersChanged() {
		s := m.Slots()
		mem := s[0].Current
		if mem == "" {
			mem = "built-in"
		}
		fmt.Fprintf(out, "✓ Memory provider: %s  Context engine: %s\n", termsafe.Line(mem), termsafe.Line(s[1].Current))
	}
	if len(rows) > 0 || m.ProvidersChanged() {
		fmt.Fprintln(out, "Changes take effect on next session.")
	}
	// A plugin enabled here gets the capability question `plugins enable` asks.
	for _, p := range newly {
		if declared := capability.KnownOnly(p.Candidate.Manifest.Capabilities); len(declared) > 0 && p.Candidate.Source != "bundled" {
			if err := runCapabilityConsent(ctx, f, h, p.Key, declared, "requests"); err != nil {
				return err
			}
		}
	}
	return nil
}

// persistSelection applies the checkboxes to plugins.enabled/disabled by
// canonical key (upstream's _persist_plugin_selection): a checked plugin that
// was not enabled is added to enabled and its key and leaf leave disabled; an unchecked one
// leaves enabled and is added to disabled. Plugins not shown keep their state.
// It reports whether config.yaml changed and the plugins newly enabled.
func persistSelection(ctx context.Context, store config.Store, ps []*plugins.Plugin, checked []bool) (bool, []*plugins.Plugin, error) {
	var changed bool
	var newly []*plugins.Plugin
	err := store.Update(ctx, func(d *config.Doc) error {
		changed, newly = false, nil // Update may run fn again on a fresh read
		note := func(ok bool, err error) error {
			changed = changed || ok
			return err
		}
		for i, p := range ps {
			if !checked[i] {
				if err := note(d.ListRemove("plugins.enabled", p.Key)); err != nil {
					return err
				}
				if err := note(d.ListAppend("plugins.disabled", p.Key)); err != nil {
					return err
				}
				continue
			}
			if p.Status == plugins.StatusEnabled {
				continue // on already, by the lists or by default: nothing to write
			}
			newly = append(newly, p)
			if err := note(d.ListAppend("plugins.enabled", p.Key)); err != nil {
				return err
			}
			for _, n := range uniq(p.Key, leaf(p.Key)) {
				if err := note(d.ListRemove("plugins.disabled", n)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return changed, newly, err
}
