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
	cat := discoveredProviders{
		screenPlugin("sqlmem", discovery.SourceUser, "exclusive", plugins.StatusNotEnabled),
		screenPlugin("alpha", discovery.SourceUser, "", plugins.StatusEnabled),
	}
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
				t.Errorf("context choices %v: nothing discovered is a context engine yet", s[1].Choices)
			}
		})
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
