package discovery

import "fmt"

// GateConfig is the plugins section of config.yaml as the gate needs it.
// EnabledSet is false when plugins.enabled is missing or not a list, which
// means nothing is enabled (plugins are opt-in).
type GateConfig struct {
	Enabled    []string
	EnabledSet bool
	Disabled   []string
	// Removed are the plugins on the catalog's kill list, by candidate key. The
	// manager matches candidates against the list (their names and install
	// source) and passes the result in, so discovery needs no catalog.
	Removed map[string]Removal
	// MemoryProvider is memory.provider: the one memory provider that loads
	// ("" = the built-in memory only).
	MemoryProvider string
	// ContextEngine is context.engine: a plugins/context_engine/<name>/
	// plugin of that name loads ("" or "compressor" = the built-in).
	ContextEngine string
}

// Removal is a plugin the catalog's kill list names.
type Removal struct {
	Reason string // the catalog's words; "" when it gives none
	Date   string
	// Allowed: the user installed it deliberately despite the kill list
	// (--allow-removed, the install metadata's allow_removed), so it loads.
	Allowed bool
	// Source is the git source to reinstall it from, "" when nothing recorded
	// where it came from.
	Source string
}

// ReasonText is the reason, or says there is none.
func (r Removal) ReasonText() string {
	if r.Reason == "" {
		return "no reason given"
	}
	return r.Reason
}

// removal is the kill-list entry that keeps c from loading: bundled plugins are
// never on it, and an allowed one loads.
func (g GateConfig) removal(c *Candidate) (Removal, bool) {
	r, ok := g.Removed[c.Key]
	if !ok || r.Allowed || c.Source == SourceBundled {
		return Removal{}, false
	}
	return r, true
}

// Decision is the gate's verdict for one winning candidate.
type Decision struct {
	// Load: load now (the dependency-ordered pass, or a bundled backend).
	Load bool
	// Deferred marks a bundled platform plugin: upstream leaves it to the gateway,
	// which loads it when its platform is used. This host has no gateway, so a
	// deferred plugin is never loaded.
	Deferred bool
	// EagerTools: a deferred plugin whose manifest declares provides_tools. Its
	// tools.py's register_tools(ctx) runs now, as upstream's, so the CLI sees the
	// platform's client tools; the rest of the plugin stays deferred.
	EagerTools bool
	// Status is "enabled" when the plugin is active or will be (loaded,
	// deferred, or a model provider owned by provider discovery),
	// "disabled" when config disables it, "removed" when the catalog's kill
	// list keeps it from loading, else "not enabled".
	Status Status
	Error  string // why it does not load; "" when it does
}

// Status is a plugin's state as `hermes plugins list` shows it.
type Status string

// Plugin states as `hermes plugins list` shows them.
const (
	StatusEnabled    Status = "enabled"
	StatusDisabled   Status = "disabled"
	StatusNotEnabled Status = "not enabled"
	StatusRemoved    Status = "removed" // on the catalog's kill list
	// A provider plugin is active when its category's selection names it
	// (memory.provider), else inactive: plugins.enabled does not apply to it.
	StatusActive   Status = "active"
	StatusInactive Status = "inactive"
)

// Starts reports whether the plugin is started when plugins load: all of it
// (Load), or only its tools module (EagerTools).
func (d Decision) Starts() bool { return d.Load || d.EagerTools }

// Decide applies the gate to one winning candidate. Order matters: an
// explicit disable beats everything, kinds owned by other discovery systems
// come next, bundled backends and platforms need no opt-in, a plugin on the
// catalog's kill list never loads (unless installed with --allow-removed), and
// everything else loads only when plugins.enabled names it (by key or manifest
// name). Upstream checks the kill list after plugins.enabled; checking it first
// changes only the message of a removed plugin that is not enabled, which then
// says why enabling it would not help. Upstream's refusal of the legacy Relay
// plugin keys is Hermes-core specific and skipped.
func Decide(c *Candidate, g GateConfig) Decision {
	if c == nil || c.Manifest == nil {
		return Decision{Status: StatusNotEnabled, Error: "no manifest"}
	}
	names := names(c)
	switch {
	case matchAny(names, g.Disabled):
		return Decision{Status: StatusDisabled, Error: "disabled via config"}
	case c.Category == CategoryMemory || (c.Category == "" && c.Manifest.Kind == "exclusive" && g.MemoryProvider != "" && g.MemoryProvider == c.Key):
		// A flat user plugin of kind exclusive may be a memory provider too
		// (upstream's loader scans the user plugins dir for them).
		if n := c.ProviderName(); g.MemoryProvider != "" && n == g.MemoryProvider {
			return Decision{Load: true, Status: StatusActive}
		}
		n := c.ProviderName()
		return Decision{Status: StatusInactive, Error: fmt.Sprintf("memory provider — activate with `hermes memory setup %s` (config: memory.provider: %s)", n, n)}
	case c.Category == CategoryContextEngine:
		n := c.ProviderName()
		if g.ContextEngine != "" && n == g.ContextEngine {
			return Decision{Load: true, Status: StatusActive}
		}
		return Decision{Status: StatusInactive, Error: fmt.Sprintf("context engine — activate with `hermes config set context.engine %s`", n)}
	case c.Manifest.Kind == "exclusive":
		return Decision{Status: StatusNotEnabled, Error: "exclusive plugin — activate via <category>.provider config"}
	case c.Manifest.Kind == "model-provider":
		// Upstream's provider discovery: bundled profiles load unless disabled,
		// user and project ones only when plugins.enabled names them.
		if c.Source == SourceBundled || (g.EnabledSet && matchAny(names, g.Enabled)) {
			return Decision{Load: true, Status: StatusEnabled}
		}
		return Decision{Status: StatusNotEnabled, Error: fmt.Sprintf("model provider — not enabled in config (run `hermes plugins enable %s`, then select it with model.provider or --provider)", c.Key)}
	case c.Source == SourceBundled && c.Manifest.Kind == "backend":
		return Decision{Load: true, Status: StatusEnabled}
	case c.Source == SourceBundled && c.Manifest.Kind == "platform":
		return Decision{Deferred: true, EagerTools: len(c.Manifest.ProvidesTools) > 0, Status: StatusEnabled}
	}
	if r, ok := g.removal(c); ok {
		return Decision{Status: StatusRemoved, Error: "removed from the Hermes plugin catalog: " + r.ReasonText()}
	}
	if !g.EnabledSet || !matchAny(names, g.Enabled) {
		return Decision{Status: StatusNotEnabled, Error: fmt.Sprintf("not enabled in config (run `hermes plugins enable %s` to activate)", c.Key)}
	}
	return Decision{Load: true, Status: StatusEnabled}
}

// EnabledByConfig reports whether plugins.enabled names the plugin (by key or
// manifest name), whatever else the gate decides.
func EnabledByConfig(c *Candidate, g GateConfig) bool {
	return g.EnabledSet && matchAny(names(c), g.Enabled)
}

// ListStatus is the state `hermes plugins list` shows: disabled when config
// disables the key or manifest name, removed when the kill list keeps it from
// loading, enabled when config enables one, else not enabled. Unlike Decide it
// ignores kinds and sources.
func ListStatus(c *Candidate, g GateConfig) Status {
	if c.Category != "" || (c.Manifest != nil && c.Manifest.Kind == "exclusive" && g.MemoryProvider == c.Key) {
		return Decide(c, g).Status
	}
	n := names(c)
	_, removed := g.removal(c)
	switch {
	case matchAny(n, g.Disabled):
		return StatusDisabled
	case removed:
		return StatusRemoved
	case matchAny(n, g.Enabled):
		return StatusEnabled
	}
	return StatusNotEnabled
}

// names are what config lists may use for a plugin: its key and, for
// older configs, its bare manifest name.
func names(c *Candidate) [2]string {
	n := [2]string{c.Key, c.Key}
	if c.Manifest != nil && c.Manifest.Name != "" {
		n[1] = c.Manifest.Name
	}
	return n
}

func matchAny(names [2]string, list []string) bool {
	for _, x := range list {
		if x == names[0] || x == names[1] {
			return true
		}
	}
	return false
}
