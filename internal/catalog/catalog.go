// Package catalog is the plugin catalog behind `hermes plugins search|browse|info`
// and install by bare name. It reads upstream's two formats and merges them, each
// entry keeping where it came from:
//
//   - the curated catalog ({"entries":[...],"removed":[...]}, reviewed entries pinned
//     to a commit, with a tier and declared capabilities, plus a kill list), and
//   - the community index ({"schema_version","generated_at","plugins":[...]} or a bare
//     list; metadata-only review).
//
// Each source is read through the chain fresh cache → remote → stale cache → the
// seed embedded in the binary, so search works offline. Invalid entries are skipped
// with a warning; nothing a remote serves is fatal.
package catalog

import (
	"runtime/debug"
	"sort"
	"strings"
)

// Origins of an entry: which of the two formats listed it.
const (
	OriginCatalog = "catalog" // curated catalog (reviewed, tiered)
	OriginIndex   = "index"   // community index (metadata review only)
)

// Where a source's entries were read from (upstream's "source" values).
const (
	SourceRemote = "remote"
	SourceCache  = "cache"
	SourceSeed   = "seed"
)

// SecurityFooter is upstream's note under every search: being listed is not an audit.
const SecurityFooter = "Indexed ≠ audited: inclusion in the index is a metadata review only, not a code audit. Review a plugin before enabling it."

// Entry is one installable plugin from either source.
type Entry struct {
	Name        string
	Description string
	// Author is the index's author or the catalog's maintainer.
	Author string
	Tags   []string
	// Repo is as listed: owner/name (index) or an https URL (catalog).
	Repo string
	// Ref is the pinned commit, a lower-case 40-hex SHA (validated).
	Ref      string
	Subdir   string
	Homepage string
	// Labels are the index's free-form capability labels (tools, platform, ...).
	Labels []string
	// Tools, Hooks, Middleware and Env are the catalog's declared capabilities.
	Tools, Hooks, Middleware, Env []string
	// Tier is official or community for catalog entries, "" for index entries.
	Tier           string
	Category       string
	Version        string
	DocsURL        string
	RequiresHermes string
	Image          string
	Platforms      []string
	APIVersion     int
	AddedAt        string
	// Origin is OriginCatalog or OriginIndex.
	Origin string
}

// GitURL is the URL install clones: index repos are GitHub owner/name.
func (e *Entry) GitURL() string {
	if e.Origin == OriginIndex {
		return "https://github.com/" + e.Repo + ".git"
	}
	return e.Repo
}

// Identifier is what a user could type instead of the bare name: owner/repo[/subdir]
// for index entries, repo[#subdir] for catalog entries.
func (e *Entry) Identifier() string {
	if e.Origin == OriginIndex {
		if e.Subdir != "" {
			return e.Repo + "/" + e.Subdir
		}
		return e.Repo
	}
	if e.Subdir != "" {
		return e.Repo + "#" + e.Subdir
	}
	return e.Repo
}

// Provenance is a short label for where the entry is listed: "catalog:official",
// "catalog:community" or "index".
func (e *Entry) Provenance() string {
	if e.Origin == OriginCatalog {
		return "catalog:" + e.Tier
	}
	return "index"
}

// Capabilities are the labels --capability matches: the index's labels, or for a
// catalog entry what it declares (tools, hooks, middleware, env).
func (e *Entry) Capabilities() []string {
	if e.Origin == OriginIndex {
		return e.Labels
	}
	var out []string
	if len(e.Tools) > 0 {
		out = append(out, "tools")
	}
	if len(e.Hooks) > 0 {
		out = append(out, "hooks")
	}
	if len(e.Middleware) > 0 {
		out = append(out, "middleware")
	}
	if len(e.Env) > 0 {
		out = append(out, "env")
	}
	return out
}

// Catalog is both sources merged. Entries read from a cache snapshot stay encoded
// until a search or lookup needs them (see snapshot.go); All decodes everything.
type Catalog struct {
	entries []Entry
	lazy    []*lazyIndex
	Removed KillList
	// CatalogSource and IndexSource say where each part was read from.
	CatalogSource, IndexSource string
	// Warnings are unreadable caches and failed fetches, one sentence each.
	Warnings []string
	// Skipped describes each invalid entry that was left out.
	Skipped []string
	// Fetched is true when a remote was read in this load.
	Fetched bool
}

// NewCatalog is a catalog of the given entries and kill list (tests, callers that
// build their own).
func NewCatalog(entries []Entry, removed []Removed) *Catalog {
	return &Catalog{entries: entries, Removed: removed}
}

// All returns every entry, curated and index, in no particular order.
func (c *Catalog) All() []Entry {
	var out []Entry
	c.guarded(func() {
		out = append([]Entry{}, c.entries...)
		for _, l := range c.lazy {
			out = append(out, l.all()...)
		}
	})
	return out
}

// Len is the number of entries.
func (c *Catalog) Len() int {
	n := len(c.entries)
	for _, l := range c.lazy {
		n += l.n
	}
	return n
}

// guarded runs f, which may read mapped snapshot files. If one of them faults (it
// was truncated under us), the snapshots are dropped with a warning and f runs
// again on what is left, instead of the process dying of SIGBUS.
func (c *Catalog) guarded(f func()) {
	if len(c.lazy) == 0 {
		f()
		return
	}
	faulted := func() (faulted bool) {
		old := debug.SetPanicOnFault(true)
		defer debug.SetPanicOnFault(old)
		defer func() {
			if r := recover(); r != nil {
				// A memory fault's panic value carries the faulting address.
				if _, ok := r.(interface{ Addr() uintptr }); ok {
					faulted = true
					return
				}
				panic(r)
			}
		}()
		f()
		return false
	}()
	if faulted {
		c.lazy = nil
		c.Warnings = append(c.Warnings, "a cached catalog snapshot changed while it was read; its entries are left out this time")
		f()
	}
}

// matching returns the entries whose lower-cased name satisfies f, decoding
// snapshot entries only when they match.
func (c *Catalog) matching(f func(nameL string) bool) []Entry {
	var out []Entry
	c.guarded(func() {
		out = nil
		for _, e := range c.entries {
			if f(lower(e.Name)) {
				out = append(out, e)
			}
		}
		for _, l := range c.lazy {
			l.each(func(fl *fields, off, end int) bool {
				if f(fl.name) {
					if e, ok := l.entry(off, end); ok {
						out = append(out, e)
					}
				}
				return true
			})
		}
	})
	return out
}

// Source summarises CatalogSource and IndexSource in upstream's vocabulary: the
// least fresh of the two (remote > cache > seed), so "remote" means all of it is.
func (c *Catalog) Source() string {
	rank := map[string]int{SourceRemote: 3, SourceCache: 2, SourceSeed: 1, "": 4}
	s := c.CatalogSource
	if rank[c.IndexSource] < rank[s] {
		s = c.IndexSource
	}
	if s == "" {
		return SourceSeed
	}
	return s
}

// SourceOf is where results came from: the source of the part that listed them
// (the less fresh of the two when both did). With no results it is Source(), the
// whole of what was searched.
func (c *Catalog) SourceOf(results []Result) string {
	var fromCatalog, fromIndex bool
	for _, r := range results {
		if r.Entry.Origin == OriginIndex {
			fromIndex = true
		} else {
			fromCatalog = true
		}
	}
	switch {
	case fromIndex && !fromCatalog:
		return or(c.IndexSource, SourceSeed)
	case fromCatalog && !fromIndex:
		return or(c.CatalogSource, SourceSeed)
	}
	return c.Source()
}

// RemovedFor reports the kill-list row matching a name or a repository (URL or
// owner/name), if any.
func (c *Catalog) RemovedFor(name, repo string) (Removed, bool) {
	return c.Removed.Match([]string{name}, repo)
}

// LookupError is a bare name that resolves to nothing or to several entries.
type LookupError struct {
	Name string
	// Candidates are the entries that match exactly (ambiguous) or by substring
	// (suggestions for an unknown name).
	Candidates []Entry
	Ambiguous  bool
}

func (e *LookupError) Error() string {
	var b strings.Builder
	if e.Ambiguous {
		b.WriteString("'" + e.Name + "' matches more than one plugin; nothing was installed. Install one by its source:")
	} else {
		b.WriteString("'" + e.Name + "' is not in the Hermes plugin catalog and is not a Git URL or owner/repo shorthand. Browse entries with `hermes plugins search`.")
		if len(e.Candidates) > 0 {
			b.WriteString("\nDid you mean:")
		}
	}
	for _, c := range e.Candidates {
		b.WriteString("\n  " + c.Name + "  →  " + c.Identifier() + "  (" + c.Provenance() + ")")
	}
	return b.String()
}

// Lookup finds the entry a bare name means: its exact (case-insensitive) name. The
// same plugin listed by both sources (same repository and subdirectory) counts
// once, the curated entry winning. Several different plugins under that name are
// ambiguous; an unknown name returns up to five substring matches as suggestions.
// Unlike upstream's index resolver, a unique substring is never installed: a user
// only gets the plugin they named.
func (c *Catalog) Lookup(name string) (*Entry, error) {
	n := lower(strings.TrimSpace(name))
	var exact []Entry
	seen := map[string]int{}
	for _, e := range c.matching(func(l string) bool { return l == n }) {
		key := normRepo(e.Repo) + "#" + e.Subdir
		if i, ok := seen[key]; ok {
			if exact[i].Origin == OriginIndex && e.Origin == OriginCatalog {
				exact[i] = e
			}
			continue
		}
		seen[key] = len(exact)
		exact = append(exact, e)
	}
	switch {
	case len(exact) == 1:
		return &exact[0], nil
	case len(exact) > 1:
		sort.SliceStable(exact, func(i, j int) bool { return exact[i].Origin == OriginCatalog && exact[j].Origin != OriginCatalog })
		return nil, &LookupError{Name: name, Candidates: exact, Ambiguous: true}
	}
	var sugg []Entry
	if n != "" {
		sugg = c.matching(func(l string) bool { return strings.Contains(l, n) })
		// Names that start with what was typed first, then by name.
		sort.Slice(sugg, func(i, j int) bool {
			pi, pj := strings.HasPrefix(lower(sugg[i].Name), n), strings.HasPrefix(lower(sugg[j].Name), n)
			if pi != pj {
				return pi
			}
			return sugg[i].Name < sugg[j].Name
		})
		if len(sugg) > 5 {
			sugg = sugg[:5]
		}
	}
	return nil, &LookupError{Name: name, Candidates: sugg}
}

// IsBareName reports whether an install identifier is a catalog name rather than a
// source: no '/', '\\', ':' or URL scheme. owner/repo and URLs never touch the catalog.
func IsBareName(id string) bool {
	id = strings.TrimSpace(id)
	return allIn(id, 1, 64, isBareNameChar) && !strings.HasPrefix(id, ".")
}
