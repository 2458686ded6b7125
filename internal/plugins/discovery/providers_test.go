package discovery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviderCategories(t *testing.T) {
	bundled, user, project := t.TempDir(), t.TempDir(), t.TempDir()
	tree(t, bundled, map[string]string{
		"memory/honcho/plugin.yaml":        "name: honcho\ndescription: bundled honcho\n",
		"memory/honcho/__init__.py":        "",
		"memory/mem0/plugin.yaml":          "name: mem0\n",
		"model-providers/acme/plugin.yaml": "name: acme\n",
		"context_engine/lcm/plugin.yaml":   "name: lcm\n",
	})
	tree(t, user, map[string]string{
		// A user provider replaces the bundled one of the same name (the seed).
		"memory/honcho/plugin.yaml": "name: honcho\ndescription: my honcho\n",
		"memory/honcho/__init__.py": "",
		// No plugin.yaml: upstream's loader takes the directory by its __init__.py.
		"memory/bare/__init__.py": "class P(MemoryProvider): pass\n",
		// Neither: skipped with a warning, never silently.
		"memory/empty/README": "x",
	})
	tree(t, project, map[string]string{
		"model-providers/acme/plugin.yaml": "name: acme\ndescription: project acme\n",
	})
	cands, ws := Discover(Options{BundledDir: bundled, UserDir: user, ProjectDir: project})
	want := map[string]struct {
		src  Source
		cat  string
		kind string
		desc string
	}{
		"memory/honcho":        {SourceUser, CategoryMemory, "exclusive", "my honcho"},
		"memory/mem0":          {SourceBundled, CategoryMemory, "exclusive", ""},
		"memory/bare":          {SourceUser, CategoryMemory, "exclusive", ""},
		"model-providers/acme": {SourceProject, CategoryModelProvider, "model-provider", "project acme"},
		"context_engine/lcm":   {SourceBundled, CategoryContextEngine, "exclusive", ""},
	}
	if len(cands) != len(want) {
		t.Fatalf("got %q, want %d candidates", keys(cands), len(want))
	}
	for _, c := range cands {
		w, ok := want[c.Key]
		if !ok {
			t.Errorf("unexpected candidate %s", c.Key)
			continue
		}
		if c.Source != w.src || c.Category != w.cat || c.Manifest.Kind != w.kind || c.Manifest.Description != w.desc {
			t.Errorf("%s: source %s category %s kind %s desc %q, want %+v", c.Key, c.Source, c.Category, c.Manifest.Kind, c.Manifest.Description, w)
		}
	}
	wantWarnings(t, ws, "needs a plugin.yaml or an __init__.py")
}

func TestProviderGate(t *testing.T) {
	user := t.TempDir()
	tree(t, user, map[string]string{
		"memory/sqlmem/plugin.yaml":        "name: sqlmem\n",
		"memory/other/plugin.yaml":         "name: other\n",
		"model-providers/acme/plugin.yaml": "name: acme\n",
		"context_engine/lcm/plugin.yaml":   "name: lcm\n",
		"flatmem/plugin.yaml":              "name: flatmem\n",
		"flatmem/__init__.py":              "class P(MemoryProvider): pass\n",
	})
	cands, _ := Discover(Options{UserDir: user})
	by := map[string]*Candidate{}
	for _, c := range cands {
		by[c.Key] = c
	}
	tests := []struct {
		name   string
		key    string
		gate   GateConfig
		load   bool
		status Status
		errSub string
	}{
		{"selected memory provider loads", "memory/sqlmem", GateConfig{MemoryProvider: "sqlmem"}, true, StatusActive, ""},
		{"plugins.enabled does not activate a provider", "memory/sqlmem", GateConfig{Enabled: []string{"memory/sqlmem", "sqlmem"}, EnabledSet: true}, false, StatusInactive, "hermes memory setup sqlmem"},
		{"another provider selected", "memory/other", GateConfig{MemoryProvider: "sqlmem"}, false, StatusInactive, "memory.provider: other"},
		{"disabled wins", "memory/sqlmem", GateConfig{MemoryProvider: "sqlmem", Disabled: []string{"sqlmem"}}, false, StatusDisabled, "disabled via config"},
		{"flat exclusive plugin selected by memory.provider", "flatmem", GateConfig{MemoryProvider: "flatmem"}, true, StatusActive, ""},
		{"flat exclusive plugin not selected", "flatmem", GateConfig{}, false, StatusNotEnabled, "exclusive plugin"},
		{"model provider not enabled", "model-providers/acme", GateConfig{}, false, StatusNotEnabled, "hermes plugins enable model-providers/acme"},
		{"model provider enabled loads", "model-providers/acme", GateConfig{Enabled: []string{"model-providers/acme"}, EnabledSet: true}, true, StatusEnabled, ""},
		{"context engine inactive", "context_engine/lcm", GateConfig{}, false, StatusInactive, "context.engine lcm"},
		{"another context engine selected", "context_engine/lcm", GateConfig{ContextEngine: "other"}, false, StatusInactive, "context.engine lcm"},
		{"selected context engine loads", "context_engine/lcm", GateConfig{ContextEngine: "lcm"}, true, StatusActive, ""},
		{"plugins.enabled does not activate an engine", "context_engine/lcm", GateConfig{Enabled: []string{"context_engine/lcm"}, EnabledSet: true}, false, StatusInactive, "context.engine"},
		{"disabled beats context.engine", "context_engine/lcm", GateConfig{ContextEngine: "lcm", Disabled: []string{"context_engine/lcm"}}, false, StatusDisabled, "disabled via config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := by[tt.key]
			if c == nil {
				t.Fatalf("no candidate %s", tt.key)
			}
			d := Decide(c, tt.gate)
			if d.Load != tt.load || d.Status != tt.status || !strings.Contains(d.Error, tt.errSub) {
				t.Fatalf("Decide = %+v, want load %v status %s error containing %q", d, tt.load, tt.status, tt.errSub)
			}
			if ls := ListStatus(c, tt.gate); tt.key != "flatmem" && ls != tt.status {
				t.Errorf("ListStatus = %s, want %s", ls, tt.status)
			}
		})
	}
}

func TestMemoryProviderEntryPoints(t *testing.T) {
	site := t.TempDir()
	dist := filepath.Join(site, "hermes_sqlmem-1.0.dist-info")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dist, "entry_points.txt"), "[hermes_agent.memory_providers]\nsqlmem = hermes_sqlmem\n\n[hermes_agent.plugins]\nsqlmem = hermes_sqlmem.general\n")
	writeFile(t, filepath.Join(dist, "METADATA"), "Name: hermes-sqlmem\nVersion: 1.0\nSummary: SQLite memory\n")
	cands, ws := Discover(Options{SitePackages: []string{site}, EntryPointCache: filepath.Join(t.TempDir(), "ep.json")})
	if got := keys(cands); len(got) != 2 || got[0] != "memory/sqlmem" || got[1] != "sqlmem" {
		t.Fatalf("keys = %q, want memory/sqlmem and sqlmem (warnings %v)", got, ws)
	}
	c := cands[0]
	if c.Category != CategoryMemory || c.Manifest.Kind != "exclusive" || c.EntryPoint.Value != "hermes_sqlmem" || c.ProviderName() != "sqlmem" {
		t.Fatalf("memory entry point candidate = %+v", c)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
