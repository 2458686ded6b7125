package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/pluginsui"
)

func screenPlugin(key string, src discovery.Source, kind string, st plugins.Status) *plugins.Plugin {
	return &plugins.Plugin{Key: key, Status: st, Candidate: &discovery.Candidate{
		Key: key, Source: src, Manifest: &manifest.Manifest{Name: leaf(key), Description: "about " + key, Kind: kind},
	}}
}

// The current value of a slot as config.yaml holds it, a hand-broken one included.
func TestProviderSlots(t *testing.T) {
	tests := []struct {
		name          string
		yaml          string
		memory, ctxEn string
	}{
		{name: "missing", yaml: "_config_version: 21\n", memory: "", ctxEn: "compressor"},
		{name: "null", yaml: "memory:\n  provider:\ncontext:\n  engine: null\n", memory: "", ctxEn: "compressor"},
		{name: "set", yaml: "memory:\n  provider: sqlmem\ncontext:\n  engine: lcm\n", memory: "sqlmem", ctxEn: "lcm"},
		{name: "explicit built-in", yaml: "memory:\n  provider: \"\"\n", memory: "", ctxEn: "compressor"},
		// Not a name: shown as its YAML value, which no choice is ("(not found)").
		{name: "a list", yaml: "memory:\n  provider: [a, b]\n", memory: "[a b]", ctxEn: "compressor"},
		{name: "a number", yaml: "context:\n  engine: 3\n", memory: "", ctxEn: "3"},
		{name: "memory not a mapping", yaml: "memory: honcho\n", memory: "", ctxEn: "compressor"},
	}
	cat := discoveredProviders{plugins: []*plugins.Plugin{
		screenPlugin("sqlmem", discovery.SourceUser, "exclusive", plugins.StatusNotEnabled),
		screenPlugin("alpha", discovery.SourceUser, "", plugins.StatusEnabled),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := config.Parse([]byte(tt.yaml), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s := providerSlots(d, cat)
			if s[0].Current != tt.memory || s[1].Current != tt.ctxEn {
				t.Errorf("current %q, %q; want %q, %q", s[0].Current, s[1].Current, tt.memory, tt.ctxEn)
			}
			if want := []pluginsui.Choice{{Name: "sqlmem", Description: "about sqlmem"}}; !slices.Equal(s[0].Choices, want) {
				t.Errorf("memory choices %v, want %v", s[0].Choices, want)
			}
			if len(s[1].Choices) != 0 {
				t.Errorf("context choices %v: nothing discovered is a context engine", s[1].Choices)
			}
		})
	}
}

func providerPlugin(category, name, desc string, src discovery.Source) *plugins.Plugin {
	key := category + "/" + name
	return &plugins.Plugin{Key: key, Status: plugins.StatusInactive, Candidate: &discovery.Candidate{
		Key: key, Source: src, Category: category, Manifest: &manifest.Manifest{Name: name, Description: desc, Kind: "exclusive"},
	}}
}

// The pickers offer what discovery found: sub-category directories and entry
// points by the name their setting holds, flat exclusive plugins, engines
// general plugins registered; never general plugins, model providers or
// plugins on the kill list.
func TestProviderCatalog(t *testing.T) {
	gone := providerPlugin(discovery.CategoryMemory, "gone", "killed", discovery.SourceUser)
	gone.Removal = &discovery.Removal{}
	all := []*plugins.Plugin{
		providerPlugin(discovery.CategoryMemory, "sqlmem", "SQLite memory", discovery.SourceUser),
		providerPlugin(discovery.CategoryMemory, "honcho", "bundled honcho", discovery.SourceBundled),
		providerPlugin(discovery.CategoryMemory, "pipmem", "from pip", discovery.SourceEntrypoint),
		screenPlugin("flatmem", discovery.SourceUser, "exclusive", plugins.StatusNotEnabled),
		// A flat exclusive plugin named like a memory/<name> one: one choice.
		screenPlugin("sqlmem", discovery.SourceUser, "exclusive", plugins.StatusNotEnabled),
		gone,
		providerPlugin(discovery.CategoryContextEngine, "lcm", "lossless context", discovery.SourceUser),
		providerPlugin(discovery.CategoryModelProvider, "acme", "a model provider", discovery.SourceUser),
		screenPlugin("general", discovery.SourceUser, "", plugins.StatusEnabled),
	}
	all[7].Candidate.Manifest.Kind = "model-provider"
	tests := []struct {
		name           string
		engines        []registry.Provider
		memory, ctxEng []pluginsui.Choice
	}{
		{
			name: "discovered only",
			memory: []pluginsui.Choice{{Name: "flatmem", Description: "about flatmem"}, {Name: "honcho", Description: "bundled honcho"},
				{Name: "pipmem", Description: "from pip"}, {Name: "sqlmem", Description: "SQLite memory"}},
			ctxEng: []pluginsui.Choice{{Name: "lcm", Description: "lossless context"}},
		},
		{
			name: "with a plugin-registered engine",
			engines: []registry.Provider{
				{Kind: registry.ContextEngine, Name: "keeplast", Plugin: "keeplast"},
				// The directory engine's own registration is not listed twice.
				{Kind: registry.ContextEngine, Name: "lossless", Plugin: "context_engine/lcm"},
			},
			memory: []pluginsui.Choice{{Name: "flatmem", Description: "about flatmem"}, {Name: "honcho", Description: "bundled honcho"},
				{Name: "pipmem", Description: "from pip"}, {Name: "sqlmem", Description: "SQLite memory"}},
			ctxEng: []pluginsui.Choice{{Name: "keeplast", Description: "installed plugin"}, {Name: "lcm", Description: "lossless context"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := discoveredProviders{plugins: all, engines: tt.engines}
			if got := cat.MemoryProviders(); !slices.Equal(got, tt.memory) {
				t.Errorf("memory providers %+v, want %+v", got, tt.memory)
			}
			if got := cat.ContextEngines(); !slices.Equal(got, tt.ctxEng) {
				t.Errorf("context engines %+v, want %+v", got, tt.ctxEng)
			}
		})
	}
	// The slots carry them to the screen.
	d, err := config.Parse([]byte("context:\n  engine: lcm\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := providerSlots(d, discoveredProviders{plugins: all})
	if s[1].Current != "lcm" || len(s[1].Choices) != 1 || s[1].Choices[0].Name != "lcm" || len(s[0].Choices) != 4 {
		t.Errorf("slots %+v", s)
	}
	// No memory provider or context engine is a general plugin checkbox; a
	// model provider is (plugins.enabled loads it).
	_, rows := screenPlugins(all)
	if len(rows) != 2 || rows[0].Key != "model-providers/acme" || rows[1].Key != "general" {
		t.Errorf("general rows %+v, want the model provider and general", rows)
	}
}

func TestScreenPlugins(t *testing.T) {
	killed := screenPlugin("gone", discovery.SourceUser, "", plugins.StatusRemoved)
	killed.Removal = &discovery.Removal{}
	all := []*plugins.Plugin{
		screenPlugin("datetime", discovery.SourceBundled, "", plugins.StatusNotEnabled),
		screenPlugin("observability/trace", discovery.SourceUser, "", plugins.StatusEnabled),
		screenPlugin("sqlmem", discovery.SourceUser, "exclusive", plugins.StatusNotEnabled),
		killed,
	}
	ps, rows := screenPlugins(all)
	want := []pluginsui.Plugin{
		{Key: "datetime", Name: "datetime", Description: "about datetime", Bundled: true},
		{Key: "observability/trace", Name: "trace", Description: "about observability/trace", Checked: true},
	}
	if !slices.Equal(rows, want) || len(ps) != 2 || ps[1].Key != "observability/trace" {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

// The checkboxes land in plugins.enabled/disabled by key, comments and plugins
// not shown untouched; nothing to change writes nothing.
func TestPersistSelection(t *testing.T) {
	const start = `_config_version: 21
# who is on
plugins:
  enabled:
    - beta       # on since May
    - hidden
  disabled: [trace, old]   # trace by its leaf
`
	rows := []*plugins.Plugin{
		screenPlugin("alpha", discovery.SourceUser, "", plugins.StatusNotEnabled),
		screenPlugin("beta", discovery.SourceUser, "", plugins.StatusEnabled),
		screenPlugin("observability/trace", discovery.SourceUser, "", plugins.StatusDisabled),
	}
	tests := []struct {
		name    string
		checked []bool
		changed bool
		newly   []string
		want    string
	}{
		{
			name:    "check alpha and trace, uncheck beta",
			checked: []bool{true, false, true},
			changed: true,
			newly:   []string{"alpha", "observability/trace"},
			want: `_config_version: 21
# who is on
plugins:
  enabled:
    - hidden
    - alpha
    - observability/trace
  disabled: [old, beta]   # trace by its leaf
`,
		},
		{
			name:    "as it was but alpha written off",
			checked: []bool{false, true, false},
			changed: true,
			want: `_config_version: 21
# who is on
plugins:
  enabled:
    - beta       # on since May
    - hidden
  disabled: [trace, old, alpha, observability/trace]   # trace by its leaf
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(start), 0o600); err != nil {
				t.Fatal(err)
			}
			store := config.Store{Path: path}
			changed, newly, err := persistSelection(context.Background(), store, rows, tt.checked)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, p := range newly {
				keys = append(keys, p.Key)
			}
			if changed != tt.changed || !slices.Equal(keys, tt.newly) {
				t.Errorf("changed %v newly %v, want %v %v", changed, keys, tt.changed, tt.newly)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("config.yaml:\n%s\nwant:\n%s", got, tt.want)
			}
			// The same selection again changes nothing.
			again, _, err := persistSelection(context.Background(), store, rows, tt.checked)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(path); again || string(after) != string(got) {
				t.Errorf("a second save changed %v:\n%s", again, after)
			}
		})
	}
}
