package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) *Doc {
	t.Helper()
	d, err := Parse([]byte(src), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPluginsEnabledDisabled(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		enabled    []string
		enabledSet bool
		disabled   []string
		warns      int
	}{
		{"no plugins section", "model: x\n", nil, false, nil, 0},
		{"plugins null", "plugins:\n", nil, false, nil, 0},
		{"enabled missing", "plugins:\n  disabled: [b]\n", nil, false, []string{"b"}, 0},
		{"enabled null", "plugins:\n  enabled:\n", nil, false, nil, 0},
		{"enabled explicit empty", "plugins:\n  enabled: []\n", []string{}, true, nil, 0},
		{"enabled list", "plugins:\n  enabled: [a, observability/langfuse]\n", []string{"a", "observability/langfuse"}, true, nil, 0},
		{"enabled not a list", "plugins:\n  enabled: a\n", nil, false, nil, 1},
		{"non-string entry skipped", "plugins:\n  enabled: [a, 3]\n", []string{"a"}, true, nil, 1},
		{"disabled not a list", "plugins:\n  disabled: x\n", nil, false, nil, 1},
		{"disabled mapping", "plugins:\n  disabled: {a: 1}\n", nil, false, nil, 1},
		{"plugins not a mapping", "plugins: [a]\n", nil, false, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, warns := Plugins(mustParse(t, tc.src))
			if ps.EnabledSet != tc.enabledSet || strings.Join(ps.Enabled, ",") != strings.Join(tc.enabled, ",") ||
				(tc.enabledSet && ps.Enabled == nil) {
				t.Errorf("Enabled = %#v (set %v), want %#v (set %v)", ps.Enabled, ps.EnabledSet, tc.enabled, tc.enabledSet)
			}
			if strings.Join(ps.Disabled, ",") != strings.Join(tc.disabled, ",") {
				t.Errorf("Disabled = %v, want %v", ps.Disabled, tc.disabled)
			}
			if len(warns) != tc.warns {
				t.Errorf("warnings = %q, want %d", warns, tc.warns)
			}
		})
	}
}

func TestHookCallbackTimeout(t *testing.T) {
	tests := []struct {
		value string // YAML text after "hook_callback_timeout:"; "-" = key absent
		want  time.Duration
		warn  string
	}{
		{"-", 30 * time.Second, ""},
		{"", 30 * time.Second, ""},
		{"null", 30 * time.Second, ""},
		{"45", 45 * time.Second, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{`"12"`, 12 * time.Second, ""},
		{"0", 0, ""},
		{"600", 600 * time.Second, ""},
		{"601", 600 * time.Second, "plugins.hook_callback_timeout=601 exceeds max 600s; clamping"},
		{"1e6", 600 * time.Second, "plugins.hook_callback_timeout=1e+06 exceeds max 600s; clamping"},
		{".inf", 600 * time.Second, "plugins.hook_callback_timeout=inf exceeds max 600s; clamping"},
		{"-5", 30 * time.Second, "plugins.hook_callback_timeout=-5 is negative; using default 30s"},
		{"-0.5", 30 * time.Second, "plugins.hook_callback_timeout=-0.5 is negative; using default 30s"},
		{"abc", 30 * time.Second, "plugins.hook_callback_timeout is not a number; using default 30s"},
		{"[1]", 30 * time.Second, "plugins.hook_callback_timeout is not a number; using default 30s"},
		{"true", 30 * time.Second, "plugins.hook_callback_timeout is not a number; using default 30s"},
		{".nan", 30 * time.Second, "plugins.hook_callback_timeout is not a number; using default 30s"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			src := "plugins:\n  enabled: []\n"
			if tc.value != "-" {
				src += "  hook_callback_timeout: " + tc.value + "\n"
			}
			ps, warns := Plugins(mustParse(t, src))
			if ps.HookCallbackTimeout != tc.want {
				t.Errorf("HookCallbackTimeout = %v, want %v", ps.HookCallbackTimeout, tc.want)
			}
			if got := strings.Join(warns, "|"); got != tc.warn {
				t.Errorf("warnings = %q, want %q", got, tc.warn)
			}
		})
	}
}

func TestToolCallTimeoutAndOtherSettings(t *testing.T) {
	tests := []struct {
		src    string
		tool   time.Duration
		python string
		scan   bool
		warns  string
	}{
		{"plugins: {}\n", 120 * time.Second, "", true, ""},
		{"plugins: {tool_call_timeout: 0}\n", 0, "", true, ""},
		{"plugins: {tool_call_timeout: 3600}\n", time.Hour, "", true, ""},
		{"plugins: {tool_call_timeout: -1}\n", 120 * time.Second, "", true, "plugins.tool_call_timeout=-1 is negative; using default 120s"},
		{"plugins: {tool_call_timeout: soon}\n", 120 * time.Second, "", true, "plugins.tool_call_timeout is not a number; using default 120s"},
		{"plugins: {python: /usr/bin/python3.12, scan_on_install: false}\n", 120 * time.Second, "/usr/bin/python3.12", false, ""},
		// Upstream reads config.yaml with PyYAML, where these words are booleans.
		{"plugins:\n  scan_on_install: no\n", 120 * time.Second, "", false, ""},
		{"plugins:\n  scan_on_install: Off\n", 120 * time.Second, "", false, ""},
		{"plugins:\n  scan_on_install: YES\n", 120 * time.Second, "", true, ""},
		{"plugins:\n  scan_on_install: n\n", 120 * time.Second, "", true,
			"plugins.scan_on_install is a string, not true/false; scanning stays on"},
		{"plugins: {python: 3, scan_on_install: maybe}\n", 120 * time.Second, "", true,
			"plugins.python is a number, not an interpreter path; ignored|plugins.scan_on_install is a string, not true/false; scanning stays on"},
	}
	for _, tc := range tests {
		ps, warns := Plugins(mustParse(t, tc.src))
		if ps.ToolCallTimeout != tc.tool || ps.Python != tc.python || ps.ScanOnInstall != tc.scan || strings.Join(warns, "|") != tc.warns {
			t.Errorf("%q: got tool=%v python=%q scan=%v warns=%q; want %v %q %v %q",
				tc.src, ps.ToolCallTimeout, ps.Python, ps.ScanOnInstall, warns, tc.tool, tc.python, tc.scan, tc.warns)
		}
	}
}

func TestPluginEntries(t *testing.T) {
	ps, _ := Plugins(mustParse(t, `plugins:
  entries:
    observability/langfuse:
      settings: {host: "https://x"}
      granted_capabilities: [tools.override]
    broken: 5
`))
	if len(ps.Entries) != 1 {
		t.Fatalf("Entries = %v, want only the mapping entry", ps.Entries)
	}
	e := ps.Entries["observability/langfuse"]
	if s, _ := e["settings"].(map[string]any); s["host"] != "https://x" {
		t.Errorf("entry = %v", e)
	}
}

func TestPluginKeyPath(t *testing.T) {
	tests := []struct {
		id, key string
		want    string
		ok      bool
	}{
		{"hello-world", "endpoint", "plugins.entries.hello-world.settings.endpoint", true},
		{"hello-world", "retry.policy", "plugins.entries.hello-world.settings.retry.policy", true},
		{"observability/langfuse", "host", "plugins.entries.observability/langfuse.settings.host", true},
		{"acme.tools", "x", `plugins.entries."acme.tools".settings.x`, true},
		{"p", "A_b-9", "plugins.entries.p.settings.A_b-9", true},
		{"p", strings.Repeat("a", 128), "plugins.entries.p.settings." + strings.Repeat("a", 128), true},
		{"p", strings.Repeat("a", 129), "", false},
		{"p", "", "", false},
		{"p", "a..b", "", false},
		{"p", ".a", "", false},
		{"p", "a/b", "", false},
		{"p", `a\b`, "", false},
		{"p", "_x", "", false},
		{"p", "-x", "", false},
		{"p", "has space", "", false},
		{"p", "model", "", false},
		{"p", "Plugins.enabled", "", false},
		{"p", "SECURITY", "", false},
		{"p", "settings.x", "", false},
		{"p", "x.model", "plugins.entries.p.settings.x.model", true},
		{"p", "ünicode", "", false},
		{"", "x", "", false},
	}
	for _, tc := range tests {
		got, err := PluginKeyPath(tc.id, tc.key)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("PluginKeyPath(%q, %q) = %q, %v; want %q, ok=%v", tc.id, tc.key, got, err, tc.want, tc.ok)
		}
		if err != nil && tc.id != "" && !errors.Is(err, ErrInvalidPluginKey) {
			t.Errorf("PluginKeyPath(%q, %q) error %v does not wrap ErrInvalidPluginKey", tc.id, tc.key, err)
		}
	}
}

func TestPluginKeyPathRoundTripsThroughSetGet(t *testing.T) {
	d := NewDoc()
	for _, id := range []string{"acme.tools", "observability/langfuse", "hello-world"} {
		path, err := PluginKeyPath(id, "retry.policy")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Set(path, id); err != nil {
			t.Fatal(err)
		}
		segs, _ := PluginKeySegments(id, "retry.policy")
		if got, ok := d.GetPath(segs); !ok || got != id {
			t.Errorf("GetPath(%q) = %v, %v; want %q", segs, got, ok, id)
		}
	}
	ps, _ := Plugins(d)
	if len(ps.Entries) != 3 {
		t.Errorf("entries = %v, want three plugin ids (dots and slashes kept inside one key)", ps.Entries)
	}
}
