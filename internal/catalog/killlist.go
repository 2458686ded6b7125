package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Removed is one kill-list row of the curated catalog.
type Removed struct {
	Name   string
	Repo   string
	Reason string
	Date   string
}

// ReasonText is the row's reason, or says there is none.
func (r Removed) ReasonText() string {
	if strings.TrimSpace(r.Reason) == "" {
		return "no reason given"
	}
	return r.Reason
}

// Why is the date and reason as messages show them after "removed from the
// Hermes plugin catalog": " on 2026-09-01: leaked tokens".
func (r Removed) Why() string {
	if r.Date != "" {
		return " on " + r.Date + ": " + r.ReasonText()
	}
	return ": " + r.ReasonText()
}

// KillList is the curated catalog's kill list: plugins taken out of the catalog,
// by name or by repository. Hermes refuses to install, enable, update or load
// them, unless the user installed one deliberately (--allow-removed).
type KillList []Removed

// Match returns the first row that names one of names (case-insensitive) or the
// repository of source: an install source (a URL, owner/name), with "#subdir"
// when the plugin is one folder of its repository. A row's repo names a whole
// repository; a row whose repo ends in "#subdir" names only that folder.
func (k KillList) Match(names []string, source string) (Removed, bool) {
	return k.Matcher().Match(names, source)
}

// Matcher is a kill list prepared for many lookups (`plugins list` matches every
// installed plugin against it): rows indexed by normalised name and repository.
type Matcher struct {
	rows    []Removed
	byName  map[string]int   // lower-cased name → first row
	byRepo  map[string][]int // normalised repository → its rows
	subdirs []string         // per row: the folder its repo names, "" for all
}

// Matcher prepares k for Match.
func (k KillList) Matcher() *Matcher {
	m := &Matcher{rows: k, byName: map[string]int{}, byRepo: map[string][]int{}, subdirs: make([]string, len(k))}
	for i, row := range k {
		if n := strings.ToLower(strings.TrimSpace(row.Name)); n != "" {
			if _, dup := m.byName[n]; !dup {
				m.byName[n] = i
			}
		}
		if row.Repo != "" {
			repo, sub := splitSource(row.Repo)
			if repo != "" {
				m.byRepo[repo] = append(m.byRepo[repo], i)
				m.subdirs[i] = sub
			}
		}
	}
	return m
}

// Match is KillList.Match: of the rows that match, the first.
func (m *Matcher) Match(names []string, source string) (Removed, bool) {
	best := -1
	for _, name := range names {
		if i, ok := m.byName[strings.ToLower(strings.TrimSpace(name))]; ok && (best < 0 || i < best) {
			best = i
		}
	}
	if source != "" && len(m.byRepo) > 0 {
		repo, sub := splitSource(source)
		for _, i := range m.byRepo[repo] {
			if (m.subdirs[i] == "" || m.subdirs[i] == sub) && (best < 0 || i < best) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return Removed{}, false
	}
	return m.rows[best], true
}

// splitSource is a source's normalised repository and its subdirectory.
func splitSource(s string) (repo, subdir string) {
	s, subdir, _ = strings.Cut(strings.TrimSpace(s), "#")
	return normRepo(s), strings.Trim(subdir, "/")
}

// normRepo is the kill list's repo comparison: trimmed, no trailing slash or .git,
// lower-case; GitHub shorthand and URLs compare equal.
func normRepo(r string) string {
	r = strings.ToLower(strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(r), "/"), ".git"))
	r = strings.TrimPrefix(r, "https://github.com/")
	r = strings.TrimPrefix(r, "http://github.com/")
	return r
}

// LoadKillList reads the kill list without the network, for the checks that must
// never wait for one (loading plugins, installing from a git URL): the seed's rows
// and those of the cached catalog, however old the cache is. A cache that cannot
// be read adds nothing; the next search reports and replaces it.
func LoadKillList(cacheDir string) KillList {
	// Only the seed's "removed" list is decoded: its entries are not needed here.
	var seed struct {
		Removed json.RawMessage `json:"removed"`
	}
	var kl KillList
	if json.Unmarshal(seedCatalog, &seed) == nil {
		kl, _ = parseRemoved(seed.Removed)
	}
	if cacheDir == "" {
		return kl
	}
	path := filepath.Join(cacheDir, CatalogCacheFile)
	st, err := os.Stat(path)
	if err != nil {
		return kl
	}
	p, err := readCache(path, st, parseCatalogPart)
	if err != nil {
		return kl
	}
	return append(kl, p.removed...)
}
