package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Provider plugins live in sub-category directories of every source root
// (plugins/memory/<name>/, plugins/model-providers/<name>/,
// plugins/context_engine/<name>/) and, for memory providers, in the
// hermes_agent.memory_providers entry-point group. Their key is
// "<category>/<name>"; the category's own selection (memory.provider,
// context.engine, model.provider) activates them, never plugins.enabled.
// Precedence is the general one, later source wins: a user provider replaces a
// bundled one of the same name (the seed; newest upstream lets bundled win).

// Provider categories.
const (
	CategoryMemory        = "memory"
	CategoryContextEngine = "context_engine"
	CategoryModelProvider = "model-providers"
)

// ProviderCategories are the sub-category directories routed to provider discovery.
var ProviderCategories = []string{CategoryMemory, CategoryContextEngine, CategoryModelProvider}

// EntryPointMemoryGroup is the entry-point group of pip-installed memory providers.
const EntryPointMemoryGroup = "hermes_agent.memory_providers"

// KindOf is the kind `hermes plugins list` shows for a category's plugins.
func KindOf(category string) string {
	switch category {
	case CategoryMemory:
		return "memory-provider"
	case CategoryContextEngine:
		return "context-engine"
	case CategoryModelProvider:
		return "model-provider"
	}
	return ""
}

// ProviderName is a provider candidate's name as its selection key spells it:
// the directory (or entry point) name.
func (c *Candidate) ProviderName() string {
	return c.Key[strings.LastIndexByte(c.Key, '/')+1:]
}

// scanProviders reads the provider sub-category directories of one source root.
func scanProviders(root string, src Source) ([]*Candidate, []Warning) {
	var out []*Candidate
	var warns []Warning
	for _, cat := range ProviderCategories {
		dir := filepath.Join(root, cat)
		slots, err := listDir(dir, cat, 1, &warns)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !isNotDirErr(err) {
				warns = append(warns, unreadable(dir, err))
			}
			continue
		}
		loadAll(slots, src)
		for _, s := range slots {
			warns = append(warns, s.warns...)
			if s.cand == nil && s.noManifest {
				s.cand = bareProvider(s.dir, cat, src)
				if s.cand == nil {
					warns = append(warns, Warning{Path: s.dir, Message: fmt.Sprintf(
						"Skipping %s: a %s plugin directory needs a plugin.yaml or an __init__.py", s.dir, KindOf(cat))})
					continue
				}
			}
			if s.cand == nil {
				continue
			}
			s.cand.Category = cat
			s.cand.Manifest.Kind = categoryManifestKind(cat)
			out = append(out, s.cand)
		}
	}
	return out, warns
}

func isNotDirErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// categoryManifestKind is the manifest kind upstream's gate gives the category.
func categoryManifestKind(cat string) string {
	if cat == CategoryModelProvider {
		return "model-provider"
	}
	return "exclusive"
}

// bareProvider is a provider directory without plugin.yaml: upstream's
// memory loader takes any directory whose __init__.py exists, named after it.
func bareProvider(dir, cat string, src Source) *Candidate {
	init := filepath.Join(dir, "__init__.py")
	if !isFile(init) {
		return nil
	}
	name := filepath.Base(dir)
	if !manifest.ValidDirName(name) {
		return nil
	}
	m := &manifest.Manifest{
		Name: name, Kind: categoryManifestKind(cat), ManifestVersion: 1, Runtime: "python", File: init,
		Raw: map[string]any{"name": name},
	}
	return &Candidate{Key: cat + "/" + name, Manifest: m, Source: src, Dir: dir}
}
