package discovery

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// plug builds a candidate "key" (manifest name = name or key) requiring deps.
func plug(key, name string, deps ...string) *Candidate {
	if name == "" {
		name = key
	}
	m := &manifest.Manifest{Name: name}
	for _, d := range deps {
		m.RequiresPlugins = append(m.RequiresPlugins, manifest.Requirement{ID: d})
	}
	return &Candidate{Key: key, Manifest: m}
}

func TestLoadOrder(t *testing.T) {
	tests := []struct {
		name  string
		in    []*Candidate
		want  []string
		warns []string
	}{
		{"empty", nil, []string{}, nil},
		{"alphabetical without deps", []*Candidate{plug("c", ""), plug("a", ""), plug("b", "")}, []string{"a", "b", "c"}, nil},
		{"dependency first", []*Candidate{plug("a", "", "b"), plug("b", "")}, []string{"b", "a"}, nil},
		{"chain", []*Candidate{plug("a", "", "b"), plug("b", "", "c"), plug("c", "")}, []string{"c", "b", "a"}, nil},
		// Rounds, not a priority queue: c is ready in the first round with b,
		// so it loads before a, which b unblocks.
		{"ready plugins load in rounds", []*Candidate{plug("a", "", "b"), plug("b", ""), plug("c", "")}, []string{"b", "c", "a"}, nil},
		{"diamond", []*Candidate{plug("top", "", "l", "r"), plug("l", "", "base"), plug("r", "", "base"), plug("base", "")},
			[]string{"base", "l", "r", "top"}, nil},
		{"dependency by manifest name", []*Candidate{plug("a", "", "tracer"), plug("observability/langfuse", "tracer")},
			[]string{"observability/langfuse", "a"}, nil},
		{"duplicate requirement counted once", []*Candidate{plug("a", "", "b", "b"), plug("b", "")}, []string{"b", "a"}, nil},
		{"self dependency ignored", []*Candidate{plug("a", "", "a"), plug("b", "")}, []string{"a", "b"},
			[]string{"Plugin a declares a dependency on itself; ignoring"}},
		{"self dependency by name", []*Candidate{plug("cat/a", "aname", "aname")}, []string{"cat/a"},
			[]string{"Plugin cat/a declares a dependency on itself; ignoring"}},
		{"missing dependency loads anyway", []*Candidate{plug("a", "", "ghost"), plug("b", "")}, []string{"a", "b"},
			[]string{"Plugin a requires plugin 'ghost' which is not enabled/installed; loading anyway (probe availability at runtime via ctx.has_plugin). Run `hermes plugins enable ghost` if it is installed."}},
		{"cycle falls back to alphabetical for all", []*Candidate{plug("z", ""), plug("b", "", "a"), plug("a", "", "b"), plug("c", "", "z")},
			[]string{"a", "b", "c", "z"},
			[]string{"Plugin dependency cycle detected (a -> b -> a); falling back to alphabetical load order for all plugins"}},
		{"longer cycle", []*Candidate{plug("a", "", "b"), plug("b", "", "c"), plug("c", "", "a")}, []string{"a", "b", "c"},
			[]string{"cycle detected (a -> b -> c -> a)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := LoadOrder(tt.in)
			if k := keys(got); !reflect.DeepEqual(k, tt.want) {
				t.Errorf("order = %q, want %q", k, tt.want)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings = %q, want %q", warns, tt.warns)
			}
			for i, w := range tt.warns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %q does not contain %q", warns[i], w)
				}
			}
		})
	}
}
