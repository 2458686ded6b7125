package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
