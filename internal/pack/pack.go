// Package pack reads, validates and writes hermes-pack.yaml: a shareable, pinned set
// of plugins (reference §8.1). A pack never carries secrets or grants: every entry is
// pinned to an exact commit, and config seeds may not set secret-shaped or reserved
// keys at any depth. Installing is the CLI's job (each entry goes through the normal
// install path); this package only says what a pack means.
package pack

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/lazyre"
)

// Error is a pack problem meant for the user as is (it names the pack or entry).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Pack is a parsed, validated hermes-pack.yaml.
type Pack struct {
	Source      string // the path or URL it was read from
	Name        string
	Description string
	Author      string
	Version     string
	Plugins     []*Entry
	// Config maps a plugin id to seeds for plugins.entries.<id>.
	Config map[string]map[string]any
	Skills []string
	// Warnings are harmless oddities (unknown top-level keys) worth showing.
	Warnings []string
}

// Entry is one plugin of a pack.
type Entry struct {
	Index  int    // 1-based position in the plugins list
	Name   string // catalog name (resolved by a Resolver) ...
	Repo   string // ... or owner/repo / git URL, as written ("github:" stripped)
	Ref    string // exact commit, lower-case
	Subdir string // as written
	// Source is where the plugin is fetched from (set for repo entries, and for name
	// entries once resolved).
	Source install.Source
	// ResolveError says why a name entry could not be resolved (it is then skipped by
	// install, counted as failed).
	ResolveError string
	// Capabilities are the declared capabilities, when a catalog knows them.
	Capabilities []string
	Catalog      *install.CatalogRef
}

// Label names the entry in messages: 'name-or-repo', else #N.
func (e *Entry) Label() string {
	switch {
	case e.Name != "":
		return "'" + e.Name + "'"
	case e.Repo != "":
		return "'" + e.Repo + "'"
	}
	return fmt.Sprintf("#%d", e.Index)
}

// Identifier is what `hermes plugins install` would be given: repo/subdir or repo.
func (e *Entry) Identifier() string {
	if e.Repo == "" {
		return e.Name
	}
	if e.Subdir == "" {
		return e.Repo
	}
	if strings.Contains(e.Repo, "://") || strings.HasPrefix(e.Repo, "git@") {
		return e.Repo + "#" + e.Subdir
	}
	return e.Repo + "/" + e.Subdir
}

// Resolved says whether the entry has a source to install from.
func (e *Entry) Resolved() bool { return e.Source.URL != "" }

// Resolution is what a Resolver returns for a catalog name.
type Resolution struct {
	Source       install.Source
	Capabilities []string
	Catalog      *install.CatalogRef
}

// Resolver turns a bare catalog name into a source (the catalog package provides
// one); its error is carried on the entry, never fatal.
type Resolver func(ctx context.Context, name string) (Resolution, error)

// Resolve fills in the source of name-only entries. A nil resolver leaves them
// unresolved with a message saying what to write instead. An entry with both a name
// and a repo installs from its repo; the catalog only adds provenance, and only when
// it lists that very source.
func (p *Pack) Resolve(ctx context.Context, r Resolver) {
	for _, e := range p.Plugins {
		if e.Name == "" {
			continue
		}
		if e.Resolved() {
			if r == nil {
				continue
			}
			if res, err := r(ctx, e.Name); err == nil && res.Source.Canonical() == e.Source.Canonical() {
				e.Capabilities, e.Catalog = res.Capabilities, res.Catalog
			}
			continue
		}
		if r == nil {
			e.ResolveError = "catalog names cannot be resolved by this build; write the entry as repo: owner/repo"
			continue
		}
		res, err := r(ctx, e.Name)
		if err != nil {
			e.ResolveError = err.Error()
			continue
		}
		e.Source, e.Capabilities, e.Catalog = res.Source, res.Capabilities, res.Catalog
	}
}

// SecretKey matches config keys shaped like secrets (upstream's _SECRET_KEY_RE).
var SecretKey = lazyre.New(`(?i)(token|secret|passw(or)?d|api[_-]?key|private[_-]?key|credential|auth)`)

// reservedKeys are plugins.entries.<id> keys only the user may set: capability grants
// and consent, and the MCP allow-list (a grant too; upstream does not list it, we do).
// Any key starting with "allow_" (a legacy trust gate) is reserved as well.
var reservedKeys = map[string]bool{"granted_capabilities": true, "capabilities_consent": true, "mcp_allowlist": true}

// Reserved reports whether key is a grant or trust gate a pack may not set.
func Reserved(key string) bool {
	return reservedKeys[key] || strings.HasPrefix(strings.ToLower(key), "allow_")
}

var shaRE = lazyre.New(`^[0-9a-fA-F]{40}$`)

var entryKeys = map[string]bool{"name": true, "repo": true, "source": true, "ref": true, "version": true, "subdir": true}

var topKeys = map[string]bool{"name": true, "description": true, "author": true, "version": true, "plugins": true, "config": true, "skills": true, "pack": true}

// Parse decodes and validates a pack. src names it in messages.
func Parse(data []byte, src string) (*Pack, error) {
	if len(data) > MaxSize {
		return nil, errf("Pack %s is larger than 1 MiB (%d bytes); a pack lists plugins, not their code.", src, len(data))
	}
	tree, err := decodeYAML(data)
	if err != nil {
		return nil, errf("Pack %s is not valid YAML: %v", src, err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, errf("Pack %s must be a YAML mapping.", src)
	}
	p := &Pack{Source: src}
	meta := map[string]any{}
	if nested, ok := top["pack"].(map[string]any); ok {
		meta = nested
	} else if v, ok := top["pack"]; ok && v != nil {
		return nil, errf("Pack %s: 'pack' must be a mapping (name, description, author, version).", src)
	}
	field := func(key string) (string, error) {
		v, ok := top[key]
		if !ok || v == nil {
			v = meta[key]
		}
		switch x := v.(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(x), nil
		case int, float64, bool:
			return fmt.Sprint(x), nil
		}
		return "", errf("Pack %s: '%s' must be a string.", src, key)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &p.Name}, {"description", &p.Description}, {"author", &p.Author}, {"version", &p.Version}} {
		if *f.dst, err = field(f.key); err != nil {
			return nil, err
		}
	}
	if p.Name == "" {
		return nil, errf("Pack %s is missing a 'name'.", src)
	}
	var unknown []string
	for k := range top {
		if !topKeys[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.Warnings = append(p.Warnings, fmt.Sprintf("Pack %s: unknown key '%s' ignored.", src, k))
	}

	list, ok := top["plugins"].([]any)
	if !ok || len(list) == 0 {
		return nil, errf("Pack %s must declare a non-empty 'plugins' list.", src)
	}
	seen := map[string]string{}
	for i, raw := range list {
		e, err := parseEntry(raw, i+1)
		if err != nil {
			return nil, err
		}
		if e.Resolved() {
			k := e.Source.Canonical()
			if prev, dup := seen[k]; dup {
				return nil, errf("Pack plugin entries %s and %s install the same source (%s); keep one.", prev, e.Label(), k)
			}
			seen[k] = e.Label()
		}
		p.Plugins = append(p.Plugins, e)
	}

	if v, ok := top["config"]; ok && v != nil {
		cfg, ok := v.(map[string]any)
		if !ok {
			return nil, errf("Pack %s: 'config' must be a mapping of plugin id to settings.", src)
		}
		p.Config = map[string]map[string]any{}
		for _, id := range sortedKeys(cfg) {
			if strings.TrimSpace(id) == "" {
				return nil, errf("Pack %s: config has an empty plugin id.", src)
			}
			seeds, ok := cfg[id].(map[string]any)
			if !ok {
				if cfg[id] == nil {
					continue
				}
				return nil, errf("Pack %s: config for '%s' must be a mapping of settings.", src, id)
			}
			if err := CheckSeeds(seeds, nil); err != nil {
				return nil, errf("Pack %s config for '%s' %v", src, id, err)
			}
			p.Config[id] = seeds
		}
	}
	if v, ok := top["skills"]; ok && v != nil {
		skills, ok := v.([]any)
		if !ok {
			return nil, errf("Pack %s: 'skills' must be a list.", src)
		}
		for _, s := range skills {
			p.Skills = append(p.Skills, strings.TrimSpace(fmt.Sprint(s)))
		}
	}
	return p, nil
}

func parseEntry(raw any, index int) (*Entry, error) {
	e := &Entry{Index: index}
	m, ok := raw.(map[string]any)
	if !ok {
		if s, isStr := raw.(string); isStr {
			e.Repo = s
		}
		return nil, errf("Pack plugin entry %s must be a mapping.", e.Label())
	}
	str := func(keys ...string) (string, error) {
		for _, k := range keys {
			v, ok := m[k]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return "", errf("Pack plugin entry #%d: '%s' must be a string.", index, k)
			}
			return strings.TrimSpace(s), nil
		}
		return "", nil
	}
	var err error
	if e.Name, err = str("name"); err != nil {
		return nil, err
	}
	if e.Repo, err = str("repo", "source"); err != nil {
		return nil, err
	}
	e.Repo = strings.TrimPrefix(e.Repo, "github:")
	var unknown []string
	for k := range m {
		if !entryKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, errf("Pack plugin entry %s has unknown key(s) %s (known: name, repo, source, ref, version, subdir).", e.Label(), strings.Join(unknown, ", "))
	}
	if e.Name == "" && e.Repo == "" {
		return nil, errf("Pack plugin entry %s needs either 'name' (catalog) or 'repo' (owner/repo or git URL).", e.Label())
	}
	ref, ok := m["ref"]
	if !ok || ref == nil {
		ref = m["version"]
	}
	refStr, isStr := ref.(string)
	if !isStr || !shaRE.MatchString(strings.TrimSpace(refStr)) {
		shown := "None"
		if ref != nil {
			shown = fmt.Sprintf("'%v'", ref)
		}
		return nil, errf("Pack plugin entry %s has ref %s: refs must be exact 40-character commit SHAs (tags and branch names are rejected — pin the commit for reproducible installs).", e.Label(), shown)
	}
	e.Ref = strings.ToLower(strings.TrimSpace(refStr))
	if v, ok := m["subdir"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr || strings.Trim(strings.TrimSpace(s), "/") == "" {
			return nil, errf("Pack plugin entry %s: 'subdir' must be a non-empty path inside the repository.", e.Label())
		}
		e.Subdir = strings.Trim(strings.TrimSpace(s), "/")
	}
	if e.Repo != "" {
		src, err := RepoSource(e.Repo, e.Subdir)
		if err != nil {
			return nil, errf("Pack plugin entry %s: %v", e.Label(), err)
		}
		e.Source = src
	} else if e.Subdir != "" {
		return nil, errf("Pack plugin entry %s: 'subdir' needs 'repo' (a catalog name already says where the plugin lives).", e.Label())
	}
	return e, nil
}

// RepoSource validates a pack entry's repo (+ subdir). Packs travel between people,
// so only owner/repo (GitHub), https:// and ssh git URLs are accepted: http:// is
// fetched in the clear and file:// would read whatever is on the installing user's
// disk.
func RepoSource(repo, subdir string) (install.Source, error) {
	lower := strings.ToLower(repo)
	switch {
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "ssh://"), strings.HasPrefix(lower, "git@"):
	case strings.Contains(repo, "://"), strings.HasPrefix(repo, "/"), strings.HasPrefix(repo, "."), strings.HasPrefix(repo, "~"):
		return install.Source{}, fmt.Errorf("repo '%s' is not allowed: packs take owner/repo, https:// or ssh git URLs (http://, file:// and local paths are refused: a shared pack must not fetch in the clear or from your disk)", repo)
	}
	if strings.ContainsAny(repo, " \t\r\n\x00") {
		return install.Source{}, fmt.Errorf("repo '%s' contains whitespace or control characters", repo)
	}
	src, err := install.ParseIdentifier(repo)
	if err != nil {
		return install.Source{}, err
	}
	if subdir != "" {
		if src.Subdir != "" {
			return install.Source{}, fmt.Errorf("repo '%s' already names a subdirectory; drop 'subdir' or the path in 'repo'", repo)
		}
		src, err = install.ParseIdentifier(src.URL + "#" + subdir)
		if err != nil {
			return install.Source{}, err
		}
	}
	return src, nil
}

// CheckSeeds refuses secret-shaped and reserved keys at any depth of a plugin's
// config seeds (mappings and lists alike), and keys that are empty.
func CheckSeeds(v any, path []string) error {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := append(append([]string(nil), path...), k)
			if strings.TrimSpace(k) == "" {
				return fmt.Errorf("has an empty key at '%s': config keys must be non-empty strings", strings.Join(path, "."))
			}
			if Reserved(k) {
				return fmt.Errorf("sets reserved key '%s' (at '%s'): packs cannot pre-grant capabilities or trust gates; each plugin asks for them during install", k, strings.Join(p, "."))
			}
			if SecretKey.MatchString(k) {
				return fmt.Errorf("sets secret-shaped key '%s' (at '%s'): secrets never travel in packs. Declare the secret in the plugin's requires_env instead, so install prompts for it", k, strings.Join(p, "."))
			}
			if err := CheckSeeds(x[k], p); err != nil {
				return err
			}
		}
	case []any:
		for i, item := range x {
			if err := CheckSeeds(item, append(append([]string(nil), path...), fmt.Sprintf("[%d]", i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// Strip returns v without secret-shaped and reserved keys at any depth (for
// export), and the dotted paths it dropped.
func Strip(v any, path string) (any, []string) {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		var dropped []string
		for _, k := range sortedKeys(x) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if Reserved(k) || SecretKey.MatchString(k) || strings.TrimSpace(k) == "" {
				dropped = append(dropped, p)
				continue
			}
			sv, d := Strip(x[k], p)
			dropped = append(dropped, d...)
			out[k] = sv
		}
		return out, dropped
	case []any:
		out := make([]any, len(x))
		var dropped []string
		for i, item := range x {
			sv, d := Strip(item, fmt.Sprintf("%s[%d]", path, i))
			dropped = append(dropped, d...)
			out[i] = sv
		}
		return out, dropped
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
