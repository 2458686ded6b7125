package install

import (
	"errors"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// checkPortable reads a tree without plugin.yaml as a portable package
// (plugin.json, Agent Plugins v1): its name is plugin.json's.
func checkPortable(tree string, src Source) (*manifest.Manifest, string, []string, error) {
	m, warns, err := manifest.LoadPortable(tree)
	if errors.Is(err, manifest.ErrNoPortable) {
		where := "the repository"
		if src.Subdir != "" {
			where = "'" + src.Subdir + "'"
		}
		return nil, "", nil, userErr("No plugin.yaml or plugin.json found in %s of %s: it is not a Hermes plugin or a portable agent plugin (or the plugin is in a subdirectory: use owner/repo/path or URL#path).", where, src.Canonical())
	}
	if err != nil {
		return nil, "", nil, userErr("Invalid portable plugin manifest: %v", err)
	}
	if !safeName(m.Name) {
		return nil, "", nil, userErr("Unsafe plugin name %q in plugin.json.", m.Name)
	}
	return m, m.Name, warns, nil
}
