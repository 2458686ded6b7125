package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/testutil/benchhome"
	"github.com/hermes-go/hermes/internal/testutil/coldrun"
)

// BenchmarkDiscover200 is `hermes plugins list` over 200 flat plugins with
// realistic ten-line manifests and an __init__.py each.
func BenchmarkDiscover200(b *testing.B) {
	root := b.TempDir()
	for i := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("plugin-%03d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		yaml := fmt.Sprintf(`name: plugin-%03d
version: "1.0.%d"
description: Example plugin number %d that does useful things
author: Jane Doe
provides_tools:
  - tool_%d
provides_hooks: [post_tool_call, pre_llm_call]
requires_env:
  - API_KEY_%d
tags: [demo, example]
`, i, i, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte(yaml), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "__init__.py"), []byte("def register(ctx):\n    pass\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		cands, ws := Discover(Options{UserDir: root})
		if len(cands) != 200 || len(ws) != 0 {
			b.Fatalf("%d plugins, %d warnings", len(cands), len(ws))
		}
	}
}

// coldFuncs are what the cold benchmarks run once in a fresh test process
// (see TestMain and internal/testutil/coldrun).
var coldFuncs = map[string]coldrun.Func{"plugins-list": pluginsList}

// pluginsList does the YAML work of `hermes plugins list` on the HERMES_HOME
// of bench/plugins-list.sh: config.yaml, then every manifest, then the gate.
// It leaves out the Python probe (cached) and the output, which parse no YAML.
func pluginsList(home string) error {
	doc, err := config.Store{Path: filepath.Join(home, "config.yaml")}.Load()
	if err != nil {
		return err
	}
	settings, _ := config.Plugins(doc)
	cands, ws := Discover(Options{UserDir: filepath.Join(home, "plugins")})
	if len(cands) != 200 || len(ws) != 0 {
		return fmt.Errorf("%d plugins, %d warnings", len(cands), len(ws))
	}
	gate := GateConfig{Enabled: settings.Enabled, EnabledSet: settings.EnabledSet, Disabled: settings.Disabled}
	enabled := 0
	for _, c := range cands {
		if Decide(c, gate).Load {
			enabled++
		}
	}
	if enabled != 20 {
		return fmt.Errorf("%d plugins enabled, want 20", enabled)
	}
	return nil
}

// BenchmarkPluginsList200 is pluginsList in a warm process (the loop) and
// cold, once per fresh process, as every `hermes plugins list` runs it. Build
// with -tags hermes_yamlgeneral to measure it without the fast YAML decoder.
func BenchmarkPluginsList200(b *testing.B) {
	home := b.TempDir()
	if err := benchhome.Write(home, 200); err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			if err := pluginsList(home); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) { coldrun.Bench(b, "plugins-list", home) })
}
