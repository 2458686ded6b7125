package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Defaults and limits of the plugins.* settings.
const (
	DefaultHookCallbackTimeout = 30 * time.Second
	MaxHookCallbackTimeout     = 600 * time.Second
	DefaultToolCallTimeout     = 120 * time.Second
)

// PluginSettings is the read-only view of the plugins: section.
type PluginSettings struct {
	// Enabled is plugins.enabled. EnabledSet is false when the key is missing or not a list,
	// which upstream treats as "nothing enabled" (None); an explicit [] sets it with no names.
	Enabled    []string
	EnabledSet bool
	// Disabled is plugins.disabled; it always wins over Enabled. Empty on any error.
	Disabled []string
	// HookCallbackTimeout bounds one hook callback; 0 disables the bound.
	HookCallbackTimeout time.Duration
	// ToolCallTimeout (plugins.tool_call_timeout, a hermes-go key) bounds one plugin tool
	// call; 0 means no timeout.
	ToolCallTimeout time.Duration
	// Python is the interpreter for Python plugins (plugins.python), "" when unset.
	Python string
	// ScanOnInstall is plugins.scan_on_install (default true).
	ScanOnInstall bool
	// Entries is plugins.entries: per-plugin settings, capability grants and legacy gates.
	Entries map[string]map[string]any
}

// Plugins reads the plugins: section with upstream's defaults. Invalid values fall back to
// their defaults and are reported in the returned warnings, one sentence each.
func Plugins(d *Doc) (PluginSettings, []string) {
	ps := PluginSettings{
		HookCallbackTimeout: DefaultHookCallbackTimeout,
		ToolCallTimeout:     DefaultToolCallTimeout,
		ScanOnInstall:       true,
		Entries:             map[string]map[string]any{},
	}
	var warns []string
	raw, ok := d.Get("plugins")
	if !ok || raw == nil {
		return ps, nil
	}
	sec, ok := raw.(map[string]any)
	if !ok {
		return ps, []string{fmt.Sprintf("plugins is %s, not a mapping; ignoring it (no plugins are enabled)", kindOf(raw))}
	}

	if list, ok := sec["enabled"].([]any); ok {
		ps.EnabledSet = true
		ps.Enabled = []string{}
		for _, x := range list {
			if s, ok := x.(string); ok {
				ps.Enabled = append(ps.Enabled, s)
			} else {
				warns = append(warns, fmt.Sprintf("plugins.enabled entry %v is not a name; ignored", x))
			}
		}
	} else if v, present := sec["enabled"]; present && v != nil {
		warns = append(warns, fmt.Sprintf("plugins.enabled is %s, not a list; no plugins are enabled", kindOf(v)))
	}
	if list, ok := sec["disabled"].([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok {
				ps.Disabled = append(ps.Disabled, s)
			}
		}
	} else if v, present := sec["disabled"]; present && v != nil {
		warns = append(warns, fmt.Sprintf("plugins.disabled is %s, not a list; no plugins are disabled", kindOf(v)))
	}

	var w string
	if ps.HookCallbackTimeout, w = timeoutSetting(sec, "hook_callback_timeout", DefaultHookCallbackTimeout, MaxHookCallbackTimeout); w != "" {
		warns = append(warns, w)
	}
	if ps.ToolCallTimeout, w = timeoutSetting(sec, "tool_call_timeout", DefaultToolCallTimeout, 0); w != "" {
		warns = append(warns, w)
	}

	switch p := sec["python"].(type) {
	case nil:
	case string:
		ps.Python = p
	default:
		warns = append(warns, fmt.Sprintf("plugins.python is %s, not an interpreter path; ignored", kindOf(p)))
	}
	if v := sec["scan_on_install"]; v != nil {
		if b, ok := Bool(v); ok {
			ps.ScanOnInstall = b
		} else {
			warns = append(warns, fmt.Sprintf("plugins.scan_on_install is %s, not true/false; scanning stays on", kindOf(v)))
		}
	}
	if entries, ok := sec["entries"].(map[string]any); ok {
		for id, e := range entries {
			if m, ok := e.(map[string]any); ok {
				ps.Entries[id] = m
			}
		}
	}
	return ps, warns
}

// Bool reads a config value as a boolean setting with upstream's YAML 1.1 words:
// true/false, yes/no and on/off (in lower, Title or UPPER case) besides real
// booleans, since upstream reads config.yaml with PyYAML. ok is false for anything
// else. Use it wherever a setting is read as a boolean; stored values are untouched.
func Bool(v any) (value, ok bool) { return manifest.Bool(v) }

// timeoutSetting reads plugins.<key> as seconds with upstream's rules for
// hook_callback_timeout: missing or null → default; not a number or negative → default
// with a warning; above max (when max > 0) → max with a warning; 0 stays 0.
func timeoutSetting(sec map[string]any, key string, def, max time.Duration) (time.Duration, string) {
	raw, ok := sec[key]
	if !ok || raw == nil {
		return def, ""
	}
	var secs float64
	switch v := raw.(type) {
	case int:
		secs = float64(v)
	case uint64:
		secs = float64(v)
	case float64:
		secs = v
	case string:
		// Upstream converts with float(), which accepts numeric text such as "45".
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return def, notNumber(key, def)
		}
		secs = f
	default:
		return def, notNumber(key, def)
	}
	if math.IsNaN(secs) {
		return def, notNumber(key, def)
	}
	if secs < 0 {
		return def, fmt.Sprintf("plugins.%s=%s is negative; using default %ss", key, fmtG(secs), fmtG(def.Seconds()))
	}
	if max > 0 && secs > max.Seconds() {
		return max, fmt.Sprintf("plugins.%s=%s exceeds max %ss; clamping", key, fmtG(secs), fmtG(max.Seconds()))
	}
	if secs > float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), ""
	}
	return time.Duration(secs * float64(time.Second)), ""
}

func notNumber(key string, def time.Duration) string {
	return fmt.Sprintf("plugins.%s is not a number; using default %ss", key, fmtG(def.Seconds()))
}

// fmtG formats like Python's %g, which upstream's warnings use.
func fmtG(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// ErrInvalidPluginKey is returned (wrapped) for a plugin-relative config key that breaks
// upstream's rules.
var ErrInvalidPluginKey = errors.New("use a plugin-relative key such as 'endpoint' or 'retry.policy'; global, cross-plugin, and traversal paths are forbidden")

// InvalidPluginKeyMessage is upstream's ValueError text for ErrInvalidPluginKey; the Python
// bridge raises ValueError with it so plugins see the words they were written against.
const InvalidPluginKeyMessage = "Expected a plugin-relative config key such as 'endpoint' or 'retry.policy'; global, cross-plugin, and traversal paths are forbidden"

var pluginKeySegment = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// pluginReservedRoots may not start a plugin-relative key (compared case-insensitively).
var pluginReservedRoots = map[string]bool{"model": true, "plugins": true, "security": true, "settings": true}

// PluginKeySegments validates a plugin-relative key as ctx.get_config/set_config accept it
// and returns the full path plugins.entries.<pluginID>.settings.<key...> as keys. The
// plugin id is one key even when it contains '.' or '/' (e.g. "observability/langfuse").
func PluginKeySegments(pluginID, key string) ([]string, error) {
	if pluginID == "" {
		return nil, errors.New("empty plugin id")
	}
	segs := strings.Split(key, ".")
	bad := key == "" || strings.ContainsAny(key, `/\`) || pluginReservedRoots[strings.ToLower(segs[0])]
	for _, s := range segs {
		if len(s) > 128 || !pluginKeySegment.MatchString(s) {
			bad = true
		}
	}
	if bad {
		return nil, fmt.Errorf("invalid config key %q for plugin %s: %w", key, pluginID, ErrInvalidPluginKey)
	}
	return append([]string{"plugins", "entries", pluginID, "settings"}, segs...), nil
}

// PluginKeyPath is PluginKeySegments joined into a dotted path for Get/Set (a plugin id
// containing dots is quoted, see SplitPath).
func PluginKeyPath(pluginID, key string) (string, error) {
	segs, err := PluginKeySegments(pluginID, key)
	if err != nil {
		return "", err
	}
	return JoinPath(segs), nil
}
