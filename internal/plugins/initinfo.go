package plugins

import "github.com/hermes-go/hermes/internal/plugins/manifest"

// manifestForPlugin is what ctx.manifest shows: the manifest document as written,
// with every field hermes interprets replaced by the value hermes uses, shaped as
// upstream's PluginManifest has it (version "1.10" as written, not the YAML float;
// author as one "name, email, url" string; requires_plugins as {id, version_range};
// only known capability ids). Fields hermes does not know stay as written, for
// ctx.manifest.get(). Entry points have no plugin.yaml and get theirs from their
// distribution's metadata and the plugin_capabilities entry-point group.
func manifestForPlugin(mf *manifest.Manifest) map[string]any {
	out := make(map[string]any, len(mf.Raw)+24)
	for k, v := range mf.Raw {
		out[k] = v
	}
	strs := func(list []string) []any {
		l := make([]any, 0, len(list))
		for _, s := range list {
			l = append(l, s)
		}
		return l
	}
	env := func(list []manifest.EnvVar) []any {
		l := make([]any, 0, len(list))
		for _, e := range list {
			if e.Description == "" && e.URL == "" && !e.Secret {
				l = append(l, e.Name) // written as a bare name
				continue
			}
			l = append(l, map[string]any{"name": e.Name, "description": e.Description, "url": e.URL, "secret": e.Secret})
		}
		return l
	}
	reqs := make([]any, 0, len(mf.RequiresPlugins))
	for _, r := range mf.RequiresPlugins {
		reqs = append(reqs, map[string]any{"id": r.ID, "version_range": r.VersionRange})
	}
	schema := make(map[string]any, len(mf.ConfigSchema))
	for k, f := range mf.ConfigSchema {
		field := map[string]any{"type": f.Type, "description": f.Description, "required": f.Required}
		if f.HasDefault {
			field["default"] = f.Default
		}
		schema[k] = field
	}
	var api any
	if mf.APIVersion != nil {
		api = *mf.APIVersion
	}
	manifestVersion := mf.ManifestVersion
	if manifestVersion == 0 {
		manifestVersion = 1
	}
	for k, v := range map[string]any{
		"name": mf.Name, "version": mf.Version, "description": mf.Description, "author": mf.Author,
		"requires_env": env(mf.RequiresEnv), "provides_tools": strs(mf.ProvidesTools),
		"provides_hooks": strs(mf.ProvidesHooks), "manifest_version": manifestVersion, "api_version": api,
		"requires_plugins": reqs, "python_dependencies": strs(mf.PythonDependencies), "config_schema": schema,
		"license": mf.License, "homepage": mf.Homepage, "tags": strs(mf.Tags),
		"capabilities": strs(mf.Capabilities), "emits": strs(mf.Emits), "listens": strs(mf.Listens),
		"requires_hermes": mf.RequiresHermes,
	} {
		out[k] = v
	}
	if mf.Kind != "" {
		out["kind"] = mf.Kind
	}
	return out
}
