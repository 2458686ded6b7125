package cli

import (
	"github.com/hermes-go/hermes/internal/bundled"
	"github.com/hermes-go/hermes/internal/plugins"
)

// builtinPlugins are the Go plugins compiled into this binary (source "bundled").
func builtinPlugins() []plugins.Builtin {
	var out []plugins.Builtin
	for _, b := range bundled.All() {
		out = append(out, plugins.Builtin{Manifest: b.Manifest, Plugin: b.Plugin})
	}
	return out
}
