package app

import (
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/registry"
)

func TestPickProvider(t *testing.T) {
	reg := func(plugin, name string, bundled bool, aliases ...string) registry.Provider {
		al := make([]any, len(aliases))
		for i, a := range aliases {
			al[i] = a
		}
		return registry.Provider{Kind: registry.ModelProvider, Plugin: plugin, Name: name, Bundled: bundled, Details: map[string]any{"aliases": al}}
	}
	bundledOR := reg("model-providers/openrouter", "openrouter", true, "or")
	bundledLM := reg("model-providers/lmstudio", "lmstudio", true, "lm-studio")
	userOR := reg("alpha", "openrouter", false)
	userAlias := reg("beta", "studio2", false, "lm-studio")
	later := reg("zeta", "openrouter", false)
	tests := []struct {
		name       string
		regs       []registry.Provider
		lookup     string
		wantPlugin string
	}{
		{"bundled by name", []registry.Provider{bundledOR, bundledLM}, "openrouter", "model-providers/openrouter"},
		{"bundled by alias", []registry.Provider{bundledOR, bundledLM}, "lm-studio", "model-providers/lmstudio"},
		{"a plugin's profile replaces the bundled one, whatever the key order", []registry.Provider{userOR, bundledOR}, "openrouter", "alpha"},
		{"a plugin's alias beats a bundled alias", []registry.Provider{userAlias, bundledLM}, "lm-studio", "beta"},
		{"the last plugin registration of a name wins", []registry.Provider{userOR, bundledOR, later}, "openrouter", "zeta"},
		{"an unknown name", []registry.Provider{bundledOR}, "nosuch", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pickProvider(tc.regs, tc.lookup)
			if ok != (tc.wantPlugin != "") || got.Plugin != tc.wantPlugin {
				t.Errorf("pickProvider(%q) = %q, %v; want %q", tc.lookup, got.Plugin, ok, tc.wantPlugin)
			}
		})
	}
}
