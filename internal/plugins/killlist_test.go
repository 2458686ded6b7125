package plugins

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// killFixture writes a cached catalog whose kill list holds rows, and install
// metadata rows for the plugins directory; it returns the cache and plugins dirs.
func killFixture(t testing.TB, removed string, rows map[string]install.Row) (cacheDir, pluginsDir string) {
	t.Helper()
	root := t.TempDir()
	cacheDir, pluginsDir = filepath.Join(root, "cache"), filepath.Join(root, "plugins")
	for _, d := range []string{cacheDir, pluginsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	doc := `{"entries": [], "removed": [` + removed + `]}`
	if err := os.WriteFile(filepath.Join(cacheDir, catalog.CatalogCacheFile), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	md := &install.Metadata{Rows: rows}
	if err := install.WriteMetadata(filepath.Join(pluginsDir, install.MetadataFile), md); err != nil {
		t.Fatal(err)
	}
	return cacheDir, pluginsDir
}

func killCand(pluginsDir, key, name string, src discovery.Source) *discovery.Candidate {
	c := &discovery.Candidate{Key: key, Source: src, Manifest: &manifest.Manifest{Name: name}}
	if src == discovery.SourceUser {
		c.Dir = filepath.Join(pluginsDir, key)
	}
	return c
}

func TestRemovals(t *testing.T) {
	cacheDir, pluginsDir := killFixture(t,
		`{"name": "evil", "reason": "leaked tokens", "date": "2026-09-01"},
		 {"name": "old-relay", "reason": "renamed fork"},
		 {"repo": "https://github.com/bad/actor", "reason": "typosquat"}`,
		map[string]install.Row{
			"relay":   {Pinned: true, Source: "https://example.com/relay#plugins/relay", Catalog: &install.CatalogRef{Name: "old-relay", Tier: "official"}},
			"actor":   {Source: "https://github.com/bad/actor.git"},
			"kept":    {Source: "https://example.com/kept", AllowRemoved: true},
			"fine":    {Source: "https://github.com/good/actor.git"},
			"renamed": {Source: "https://example.com/r"},
		})
	cands := []*discovery.Candidate{
		killCand(pluginsDir, "relay", "relay", discovery.SourceUser),  // by the catalog name it was installed as
		killCand(pluginsDir, "actor", "actor", discovery.SourceUser),  // by its source
		killCand(pluginsDir, "kept", "evil", discovery.SourceUser),    // by manifest name, allowed
		killCand(pluginsDir, "fine", "fine", discovery.SourceUser),    // not listed
		killCand(pluginsDir, "renamed", "evil", discovery.SourceUser), // by manifest name
		killCand(pluginsDir, "evil", "evil", discovery.SourceProject), // by name, no metadata
		killCand(pluginsDir, "evil-ep", "evil", discovery.SourceEntrypoint),
		killCand(pluginsDir, "datetime", "evil", discovery.SourceBundled), // never
	}
	got := removals(cacheDir, cands, metadataFiles{})
	want := map[string]discovery.Removal{
		"relay":   {Reason: "renamed fork", Source: "https://example.com/relay#plugins/relay"},
		"actor":   {Reason: "typosquat", Source: "https://github.com/bad/actor.git"},
		"kept":    {Reason: "leaked tokens", Date: "2026-09-01", Allowed: true, Source: "https://example.com/kept"},
		"renamed": {Reason: "leaked tokens", Date: "2026-09-01", Source: "https://example.com/r"},
		"evil":    {Reason: "leaked tokens", Date: "2026-09-01"},
		"evil-ep": {Reason: "leaked tokens", Date: "2026-09-01"},
	}
	if len(got) != len(want) {
		t.Errorf("removals = %+v, want %d entries", got, len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %+v (listed %v), want %+v", k, g, ok, w)
		}
	}

	// No cached catalog: the seed's (empty) kill list, nothing read.
	if got := removals(t.TempDir(), cands, metadataFiles{}); got != nil {
		t.Errorf("without a kill list: %+v", got)
	}
}

// BenchmarkRemovals is what the kill list costs `plugins list` over 200 installed
// plugins that all have metadata rows, with a cached catalog of 20 kill-list rows
// (the worst case: a kill list, so every plugin is matched by name and source).
func BenchmarkRemovals(b *testing.B) {
	var removed []string
	for i := range 20 {
		removed = append(removed, fmt.Sprintf(`{"name": "gone%02d", "repo": "https://github.com/gone/p%02d", "reason": "r"}`, i, i))
	}
	rows := map[string]install.Row{}
	for i := range 200 {
		rows[fmt.Sprintf("p%03d", i)] = install.Row{Pinned: true, Revision: strings.Repeat("a", 40),
			Source: fmt.Sprintf("https://github.com/acme/p%03d.git", i), Catalog: &install.CatalogRef{Name: fmt.Sprintf("p%03d", i), Tier: "community"}}
	}
	cacheDir, pluginsDir := killFixture(b, strings.Join(removed, ","), rows)
	var cands []*discovery.Candidate
	for i := range 200 {
		cands = append(cands, killCand(pluginsDir, fmt.Sprintf("p%03d", i), fmt.Sprintf("p%03d", i), discovery.SourceUser))
	}
	// The metadata is parsed either way (`plugins list` labels sources with it) and
	// shared: what the kill list adds is the rest.
	read := metadataFiles{}
	read.get(filepath.Join(pluginsDir, install.MetadataFile))
	for b.Loop() {
		removals(cacheDir, cands, read)
	}
}
