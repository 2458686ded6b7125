package pack

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/hermes-go/hermes/internal/install"
)

// DefaultExportName is the pack name `pack export` uses without --name.
const DefaultExportName = "my-hermes-pack"

// Installed is one user plugin folder and its install metadata row (nil without one).
type Installed struct {
	Name string
	Row  *install.Row
}

// Export is the result of ExportPack.
type Export struct {
	YAML []byte
	// Skipped are plugins not exported (also written as "# WARNING" lines atop YAML).
	Skipped []string
	// Stripped are config keys left out because they are secret-shaped or reserved.
	Stripped []string
	Exported []string
}

// ExportPack writes a pack that `pack install` turns back into the same plugins at
// the same commits: one entry per plugin with git provenance (source + exact
// revision), and each exported plugin's plugins.entries settings with secret-shaped
// and reserved keys stripped at every depth. entries is config's plugins.entries.
func ExportPack(name string, plugins []Installed, entries map[string]any) (*Export, error) {
	if name == "" {
		name = DefaultExportName
	}
	plugins = append([]Installed(nil), plugins...)
	sort.Slice(plugins, func(i, j int) bool { return plugins[i].Name < plugins[j].Name })
	ex := &Export{}
	var list []any
	config := yaml.MapSlice{}
	for _, pl := range plugins {
		entry, why := exportEntry(pl)
		if why != "" {
			ex.Skipped = append(ex.Skipped, fmt.Sprintf("%s: %s", pl.Name, why))
			continue
		}
		list = append(list, entry)
		ex.Exported = append(ex.Exported, pl.Name)
		if raw, ok := entries[pl.Name].(map[string]any); ok {
			clean, dropped := Strip(raw, "")
			for _, d := range dropped {
				ex.Stripped = append(ex.Stripped, pl.Name+"."+d)
			}
			if m, ok := clean.(map[string]any); ok && len(m) > 0 {
				config = append(config, yaml.MapItem{Key: pl.Name, Value: m})
			}
		}
	}
	doc := yaml.MapSlice{
		{Key: "name", Value: name},
		{Key: "description", Value: "Exported by `hermes plugins pack export`."},
		{Key: "version", Value: "1.0.0"},
		{Key: "plugins", Value: list},
	}
	if len(config) > 0 {
		doc = append(doc, yaml.MapItem{Key: "config", Value: config})
	}
	body, err := yaml.MarshalWithOptions(doc, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("encode pack: %w", err)
	}
	var buf bytes.Buffer
	for _, s := range ex.Skipped {
		fmt.Fprintf(&buf, "# WARNING (not exported): %s\n", oneLine(s))
	}
	if len(list) == 0 {
		// A pack needs at least one plugin; say why this one has none instead of
		// writing something pack install would reject without explanation.
		buf.WriteString("# WARNING: no plugin has git provenance, so this pack lists none and cannot be installed.\n")
	}
	buf.Write(body)
	ex.YAML = buf.Bytes()
	return ex, nil
}

// exportEntry turns a metadata row into a pack entry, or says why it cannot.
func exportEntry(pl Installed) (yaml.MapSlice, string) {
	r := pl.Row
	if r == nil || r.Source == "" {
		return nil, "no Git provenance (not installed with `hermes plugins install`); share it some other way"
	}
	if !install.IsSHA(r.Revision) {
		return nil, "no exact commit recorded in the install metadata; reinstall it with `hermes plugins install <source> --ref <sha> --force`"
	}
	url, subdir := r.Source, ""
	if i := strings.IndexByte(url, '#'); i >= 0 {
		url, subdir = url[:i], url[i+1:]
	}
	switch lower := strings.ToLower(url); {
	case strings.HasPrefix(lower, "file://"):
		return nil, "installed from a local file:// repository, which a shared pack cannot point at"
	case strings.HasPrefix(lower, "http://"):
		return nil, "installed over plain http://, which packs refuse; reinstall it from an https:// URL"
	}
	// owner/repo only when it expands back to the very same URL, so the installed
	// source (and its pin, keyed on the source) is reproduced exactly.
	repo := url
	if rest, ok := strings.CutPrefix(url, "https://github.com/"); ok && strings.HasSuffix(rest, ".git") {
		if slug := strings.TrimSuffix(rest, ".git"); strings.Count(slug, "/") == 1 {
			if src, err := install.ParseIdentifier(slug); err == nil && src.URL == url {
				repo = slug
			}
		}
	}
	if _, err := RepoSource(repo, subdir); err != nil {
		return nil, fmt.Sprintf("its source cannot go in a pack: %v", err)
	}
	e := yaml.MapSlice{{Key: "repo", Value: repo}, {Key: "ref", Value: strings.ToLower(r.Revision)}}
	if r.Catalog != nil && r.Catalog.Name != "" {
		// Keeps the catalog provenance across the round trip (install still uses repo).
		e = append(yaml.MapSlice{{Key: "name", Value: r.Catalog.Name}}, e...)
	}
	if subdir != "" {
		e = append(e, yaml.MapItem{Key: "subdir", Value: subdir})
	}
	return e, ""
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
