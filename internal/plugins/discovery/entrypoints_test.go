package discovery

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEntryPoints(t *testing.T) {
	base := t.TempDir()
	site1, site2 := filepath.Join(base, "site1"), filepath.Join(base, "site2")
	tree(t, site1, map[string]string{
		// A wheel install with a plugin, its capabilities and other groups.
		"calc_plugin-1.2.0.dist-info/entry_points.txt": `# generated
[console_scripts]
calc = calc_plugin.cli:main

[hermes_agent.plugins]
calculator = calc_plugin
broken line without equals

[hermes_agent.plugin_capabilities]
calculator.llm.model_override = calc_plugin
calculator.tools.override = calc_plugin
calculator.bogus = calc_plugin
other.gateway.platform_actions = calc_plugin
calculator.llm.task_override = something_else
`,
		"calc_plugin-1.2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: calc-plugin\nVersion: 1.2.0\nSummary: A calculator\n  for agents\n\nLong description.\nSummary: not this\n",
		"calc_plugin/__init__.py":              "def register(ctx): pass\n",

		// Kind detection through a dotted module with an attribute.
		"memplug-0.1.dist-info/entry_points.txt": "[hermes_agent.plugins]\nmemplug = memplug.provider:register\n",
		"memplug-0.1.dist-info/METADATA":         "Name: memplug\nVersion: 0.1\n",
		"memplug/__init__.py":                    "",
		"memplug/provider.py":                    "class P(MemoryProvider): pass\n",

		// A single-module distribution that is a model provider.
		"modprov-2.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\nmodprov = modprov\n",
		"modprov.py":                             "register_provider(ProviderProfile())\n",

		// An egg-info install without METADATA: name and version from the dir.
		"eggy-3.1-py3.11.egg-info/entry_points.txt": "[hermes_agent.plugins]\neggy = eggy.main:plugin\n",

		// An egg-info install with PKG-INFO metadata.
		"eggmeta-0.5-py3.12.egg-info/entry_points.txt": "[hermes_agent.plugins]\neggmeta = eggmeta\n",
		"eggmeta-0.5-py3.12.egg-info/PKG-INFO":         "Metadata-Version: 1.1\nName: EggMeta\nVersion: 0.5.1\nSummary: from PKG-INFO\n",

		// Distributions without hermes entry points are ignored.
		"requests-2.0.dist-info/METADATA": "Name: requests\n",
		"notadist/":                       "",
	})
	tree(t, site2, map[string]string{
		// The same distribution again, later in sys.path: ignored.
		"calc_plugin-9.9.dist-info/entry_points.txt": "[hermes_agent.plugins]\ncalculator = shadowed\n",
		// Another distribution claiming a taken entry-point name.
		"copycat-1.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\ncalculator = copycat\nbad/name = copycat\n",
		"copycat-1.0.dist-info/METADATA":         "Name: copycat\nVersion: 1.0\n",
		// Module found only in the second site directory.
		"late-1.0.dist-info/entry_points.txt": "[hermes_agent.plugins]\nlate = late_mod\n",
		"late_mod/__init__.py":                "MemoryProvider\n",
	})

	cands, ws := Discover(Options{SitePackages: []string{site1, site2}})
	if got, want := keys(cands), []string{"calculator", "eggmeta", "eggy", "late", "memplug", "modprov"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys = %q, want %q\n%v", got, want, ws)
	}
	byKey := map[string]*Candidate{}
	for _, c := range cands {
		byKey[c.Key] = c
		if c.Source != SourceEntrypoint || c.EntryPoint == nil || c.Manifest.Name != c.Key || c.Manifest.Runtime != "python" {
			t.Errorf("candidate %s: %+v", c.Key, c)
		}
	}

	calc := byKey["calculator"]
	wantEP := EntryPoint{Name: "calculator", Value: "calc_plugin", Module: "calc_plugin", Dist: "calc-plugin", DistVersion: "1.2.0", Summary: "A calculator for agents"}
	if *calc.EntryPoint != wantEP {
		t.Errorf("entry point = %+v, want %+v", *calc.EntryPoint, wantEP)
	}
	m := calc.Manifest
	if m.Version != "1.2.0" || m.Description != "A calculator for agents" || m.Kind != "standalone" || calc.Dir != site1 {
		t.Errorf("manifest = %+v, dir %q", m, calc.Dir)
	}
	// Registry order, only this plugin's, only for the same value, only known ids.
	if want := []string{"tools.override", "llm.model_override"}; !reflect.DeepEqual(m.Capabilities, want) {
		t.Errorf("capabilities = %q, want %q", m.Capabilities, want)
	}

	for key, kind := range map[string]string{"memplug": "exclusive", "modprov": "model-provider", "eggy": "standalone", "late": "exclusive"} {
		if got := byKey[key].Manifest.Kind; got != kind {
			t.Errorf("%s kind = %q, want %q", key, got, kind)
		}
	}
	if ep := byKey["memplug"].EntryPoint; ep.Module != "memplug.provider" || ep.Value != "memplug.provider:register" {
		t.Errorf("memplug entry point = %+v", ep)
	}
	if ep := byKey["eggy"].EntryPoint; ep.Dist != "eggy" || ep.DistVersion != "3.1" || ep.Summary != "" {
		t.Errorf("eggy entry point = %+v", ep)
	}
	if ep := byKey["eggmeta"].EntryPoint; ep.Dist != "EggMeta" || ep.DistVersion != "0.5.1" || ep.Summary != "from PKG-INFO" {
		t.Errorf("eggmeta entry point = %+v", ep)
	}
	wantWarnings(t, ws,
		`entry point line "broken line without equals" is not "name = module[:attr]"`,
		`entry point "calculator" of copycat is ignored: calc-plugin already provides a plugin with that name`,
		`entry point name "bad/name" cannot name a plugin`)
}

func TestEntryPointModule(t *testing.T) {
	for value, want := range map[string]string{
		"pkg":                   "pkg",
		"pkg.mod":               "pkg.mod",
		"pkg.mod:attr":          "pkg.mod",
		" pkg.mod : attr.sub ":  "pkg.mod",
		"pkg.mod:attr [extra1]": "pkg.mod",
		"pkg.mod [extra]":       "pkg.mod",
		"not a module":          "",
		"../escape":             "",
	} {
		if got := entryPointModule(value); got != want {
			t.Errorf("entryPointModule(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestModuleSourceStaysInsideSiteDirs(t *testing.T) {
	site := t.TempDir()
	tree(t, site, map[string]string{
		"pkg/__init__.py":     "top\n",
		"pkg/sub/__init__.py": "sub\n",
		"pkg/leaf.py":         "leaf\n",
		"mod.py":              "mod\n",
		"nspkg/inner.py":      "namespace\n",
	})
	for module, want := range map[string]string{
		"pkg":         "top\n",
		"pkg.sub":     "sub\n",
		"pkg.leaf":    "leaf\n",
		"pkg.leaf.x":  "",
		"pkg.missing": "",
		"mod":         "mod\n",
		"mod.x":       "",
		"nspkg.inner": "", // namespace packages are not resolved, as upstream
		"":            "",
		"pkg..sub":    "",
	} {
		if got := moduleSource([]string{site}, module); got != want {
			t.Errorf("moduleSource(%q) = %q, want %q", module, got, want)
		}
	}
	big := strings.Repeat("x", moduleSourceProbe+10)
	tree(t, site, map[string]string{"bigmod.py": big})
	if got := moduleSource([]string{site}, "bigmod"); len(got) != moduleSourceProbe {
		t.Errorf("read %d bytes, want %d", len(got), moduleSourceProbe)
	}
}

func TestNormalizeDistName(t *testing.T) {
	for in, want := range map[string]string{
		"Calc_Plugin": "calc-plugin", "calc-plugin": "calc-plugin", "calc..__plugin": "calc-plugin", "x": "x",
	} {
		if got := normalizeDistName(in); got != want {
			t.Errorf("normalizeDistName(%q) = %q, want %q", in, got, want)
		}
	}
}
