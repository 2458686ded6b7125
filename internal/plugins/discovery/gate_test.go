package discovery

import (
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

func cand(key, name, kind string, src Source) *Candidate {
	return &Candidate{Key: key, Source: src, Manifest: &manifest.Manifest{Name: name, Kind: kind}}
}

func TestDecide(t *testing.T) {
	notEnabled := func(key string) Decision {
		return Decision{Status: StatusNotEnabled, Error: "not enabled in config (run `hermes plugins enable " + key + "` to activate)"}
	}
	load := Decision{Load: true, Status: StatusEnabled}
	tests := []struct {
		name string
		c    *Candidate
		g    GateConfig
		want Decision
	}{
		{"user plugin enabled by key", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{Enabled: []string{"tool"}, EnabledSet: true}, load},
		{"category plugin enabled by manifest name", cand("observability/langfuse", "langfuse", "standalone", SourceUser),
			GateConfig{Enabled: []string{"langfuse"}, EnabledSet: true}, load},
		{"enabled list missing", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{}, notEnabled("tool")},
		{"enabled list missing even if names given", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{Enabled: []string{"tool"}}, notEnabled("tool")},
		{"enabled list empty", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{EnabledSet: true}, notEnabled("tool")},
		{"not in enabled list", cand("cat/tool", "tool-name", "standalone", SourceProject),
			GateConfig{Enabled: []string{"other"}, EnabledSet: true}, notEnabled("cat/tool")},
		{"disabled wins over enabled", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{Enabled: []string{"tool"}, EnabledSet: true, Disabled: []string{"tool"}},
			Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"disabled by manifest name", cand("cat/x", "xname", "backend", SourceBundled),
			GateConfig{Disabled: []string{"xname"}}, Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"disabled wins over exclusive", cand("m", "m", "exclusive", SourceBundled),
			GateConfig{Disabled: []string{"m"}}, Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"exclusive never loads here", cand("m", "m", "exclusive", SourceUser),
			GateConfig{Enabled: []string{"m"}, EnabledSet: true},
			Decision{Status: StatusNotEnabled, Error: "exclusive plugin — activate via <category>.provider config"}},
		{"user model provider not enabled", cand("p", "p", "model-provider", SourceUser),
			GateConfig{}, Decision{Status: StatusNotEnabled, Error: "model provider — not enabled in config (run `hermes plugins enable p`, then select it with model.provider or --provider)"}},
		{"user model provider enabled loads", cand("p", "p", "model-provider", SourceUser),
			GateConfig{Enabled: []string{"p"}, EnabledSet: true}, load},
		{"bundled model provider loads", cand("model-providers/q", "q", "model-provider", SourceBundled),
			GateConfig{}, load},
		{"bundled model provider disabled", cand("model-providers/q", "q", "model-provider", SourceBundled),
			GateConfig{Disabled: []string{"q"}}, Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"bundled backend auto-loads", cand("image_gen/openai", "openai", "backend", SourceBundled),
			GateConfig{}, load},
		{"bundled platform is deferred", cand("platforms/irc", "irc", "platform", SourceBundled),
			GateConfig{}, Decision{Deferred: true, Status: StatusEnabled}},
		{"bundled platform with tools registers them now", func() *Candidate {
			c := cand("platforms/irc", "irc", "platform", SourceBundled)
			c.Manifest.ProvidesTools = []string{"irc_send"}
			return c
		}(), GateConfig{}, Decision{Deferred: true, EagerTools: true, Status: StatusEnabled}},
		{"disabled wins over a bundled platform's tools", func() *Candidate {
			c := cand("platforms/irc", "irc", "platform", SourceBundled)
			c.Manifest.ProvidesTools = []string{"irc_send"}
			return c
		}(), GateConfig{Disabled: []string{"irc"}}, Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"user backend needs opt-in", cand("web/x", "x", "backend", SourceUser),
			GateConfig{}, notEnabled("web/x")},
		{"user platform needs opt-in", cand("platforms/y", "y", "platform", SourceUser),
			GateConfig{Enabled: []string{"platforms/y"}, EnabledSet: true}, load},
		{"bundled standalone needs opt-in", cand("disk-cleanup", "disk-cleanup", "standalone", SourceBundled),
			GateConfig{EnabledSet: true}, notEnabled("disk-cleanup")},
		{"entry point enabled", cand("calc", "calc", "standalone", SourceEntrypoint),
			GateConfig{Enabled: []string{"calc"}, EnabledSet: true}, load},
		{"no manifest", &Candidate{Key: "x"}, GateConfig{}, Decision{Status: StatusNotEnabled, Error: "no manifest"}},
		{"kill list keeps an enabled plugin from loading", cand("relay", "relay", "standalone", SourceUser),
			GateConfig{Enabled: []string{"relay"}, EnabledSet: true, Removed: killed("relay", "leaked tokens", false)},
			Decision{Status: StatusRemoved, Error: "removed from the Hermes plugin catalog: leaked tokens"}},
		{"kill list without a reason", cand("relay", "relay", "standalone", SourceEntrypoint),
			GateConfig{Enabled: []string{"relay"}, EnabledSet: true, Removed: killed("relay", "", false)},
			Decision{Status: StatusRemoved, Error: "removed from the Hermes plugin catalog: no reason given"}},
		{"kill list says why a plugin that is not enabled would not load", cand("relay", "relay", "standalone", SourceUser),
			GateConfig{Removed: killed("relay", "leaked tokens", false)},
			Decision{Status: StatusRemoved, Error: "removed from the Hermes plugin catalog: leaked tokens"}},
		{"installed with --allow-removed loads", cand("relay", "relay", "standalone", SourceUser),
			GateConfig{Enabled: []string{"relay"}, EnabledSet: true, Removed: killed("relay", "leaked tokens", true)}, load},
		{"disabled wins over the kill list", cand("relay", "relay", "standalone", SourceUser),
			GateConfig{Disabled: []string{"relay"}, Removed: killed("relay", "x", false)},
			Decision{Status: StatusDisabled, Error: "disabled via config"}},
		{"bundled plugins are never on the kill list", cand("disk-cleanup", "disk-cleanup", "standalone", SourceBundled),
			GateConfig{Enabled: []string{"disk-cleanup"}, EnabledSet: true, Removed: killed("disk-cleanup", "x", false)}, load},
		{"the kill list names another plugin", cand("tool", "tool", "standalone", SourceUser),
			GateConfig{Enabled: []string{"tool"}, EnabledSet: true, Removed: killed("relay", "x", false)}, load},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.c, tt.g); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func killed(key, reason string, allowed bool) map[string]Removal {
	return map[string]Removal{key: {Reason: reason, Allowed: allowed}}
}

func TestListStatusRemoved(t *testing.T) {
	c := cand("relay", "relay", "standalone", SourceUser)
	on := GateConfig{Enabled: []string{"relay"}, EnabledSet: true}
	tests := []struct {
		name string
		g    GateConfig
		want Status
	}{
		{"enabled but removed", GateConfig{Enabled: on.Enabled, EnabledSet: true, Removed: killed("relay", "x", false)}, StatusRemoved},
		{"not enabled and removed", GateConfig{Removed: killed("relay", "x", false)}, StatusRemoved},
		{"removed but allowed", GateConfig{Enabled: on.Enabled, EnabledSet: true, Removed: killed("relay", "x", true)}, StatusEnabled},
		{"disabled and removed", GateConfig{Disabled: []string{"relay"}, Removed: killed("relay", "x", false)}, StatusDisabled},
	}
	for _, tt := range tests {
		if got := ListStatus(c, tt.g); got != tt.want {
			t.Errorf("%s: ListStatus = %q, want %q", tt.name, got, tt.want)
		}
	}
	if !EnabledByConfig(c, GateConfig{Enabled: on.Enabled, EnabledSet: true, Removed: killed("relay", "x", false)}) || EnabledByConfig(c, GateConfig{Enabled: on.Enabled}) {
		t.Error("EnabledByConfig")
	}
}

func TestListStatus(t *testing.T) {
	c := cand("observability/langfuse", "langfuse", "backend", SourceBundled)
	tests := []struct {
		g    GateConfig
		want Status
	}{
		{GateConfig{}, StatusNotEnabled},
		{GateConfig{Enabled: []string{"observability/langfuse"}, EnabledSet: true}, StatusEnabled},
		{GateConfig{Enabled: []string{"langfuse"}, EnabledSet: true}, StatusEnabled},
		{GateConfig{Enabled: []string{"langfuse"}, EnabledSet: true, Disabled: []string{"observability/langfuse"}}, StatusDisabled},
		{GateConfig{Disabled: []string{"langfuse"}}, StatusDisabled},
		{GateConfig{Enabled: []string{"other"}, EnabledSet: true}, StatusNotEnabled},
	}
	for _, tt := range tests {
		if got := ListStatus(c, tt.g); got != tt.want {
			t.Errorf("ListStatus(%+v) = %q, want %q", tt.g, got, tt.want)
		}
	}
}
