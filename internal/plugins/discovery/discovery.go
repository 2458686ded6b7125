// Package discovery finds the installed plugins: it scans the plugin source
// directories and Python entry points, resolves key collisions, and decides
// per plugin whether it loads (the gate) and in which order.
//
// Sources are read in this order, a later one winning a key collision:
// bundled (compiled-in builtins, then the bundled directory), user, project,
// entry points. Discovery never fails: every problem with one plugin becomes
// a Warning and the plugin is skipped.
//
// Sub-category directories (memory, context_engine, model-providers,
// cron_providers, computer_use) have discovery systems of their own. Upstream
// keeps them out of the general list only in the bundled root; here they are
// kept out at the top of every source root. The user guide routes
// ~/.hermes/plugins/memory/<name> and model-providers/<name> to those
// systems too. The provider categories (providers.go) are scanned here as
// well, as candidates marked with their Category, so they are listed with
// their kind and gated by their own selection, never by plugins.enabled.
package discovery

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Source says where a plugin was found.
type Source string

// The plugin sources, in precedence order (later wins).
const (
	SourceBundled    Source = "bundled"
	SourceUser       Source = "user"
	SourceProject    Source = "project"
	SourceEntrypoint Source = "entrypoint"
)

// EntryPoint is one hermes_agent.plugins entry point of an installed Python
// distribution. Value is "pkg.module" or "pkg.module:attr".
type EntryPoint struct {
	Name, Value, Module, Dist, DistVersion, Summary string
}

// Candidate is one discovered plugin.
type Candidate struct {
	// Key is the registry id: the manifest name for a flat plugin,
	// "<category>/<dir>" for a category plugin, the entry-point name.
	Key      string
	Manifest *manifest.Manifest
	Source   Source
	// Dir is the plugin directory; for an entry point, the site directory
	// holding its distribution; "" for a builtin.
	Dir     string
	Builtin bool // compiled-in Go plugin
	// GitCheckout: a user plugin whose directory holds .git (listed as source "git").
	GitCheckout bool
	EntryPoint  *EntryPoint // source entrypoint only
	// Category is the provider sub-category the plugin was found in (memory,
	// context_engine, model-providers), "" for a general plugin.
	Category string
}

// Builtin is a compiled-in Go plugin, treated as bundled.
type Builtin struct {
	Manifest *manifest.Manifest
	// Category is a provider sub-category (model-providers): the key is then
	// "<category>/<name>", the key a user provider of that name has.
	Category string
}

// Options says where to look.
type Options struct {
	Builtins     []Builtin
	BundledDir   string   // $HERMES_BUNDLED_PLUGINS or ""
	UserDir      string   // <HERMES_HOME>/plugins
	ProjectDir   string   // <cwd>/.hermes/plugins; "" unless HERMES_ENABLE_PROJECT_PLUGINS is Truthy
	SitePackages []string // Python site directories to scan for entry points; nil for none
	// EntryPointCache is a file where the entry-point scan is cached per site
	// directory ("" disables the cache).
	EntryPointCache string
}

// Level grades a Warning. The zero value is a real warning.
type Level int

// Warning levels, mirroring what upstream logs at warning, info and debug.
const (
	LevelWarning Level = iota
	LevelInfo
	LevelDebug
)

// Warning is one problem or notable event found while discovering. Message
// is a complete sentence (it names the path itself); Path is the file or
// directory concerned, for filtering.
type Warning struct {
	Path    string
	Message string
	Level   Level
}

// SubCategoryDirs are the top-level directories that belong to specialised
// discovery systems and are kept out of the general plugin list.
var SubCategoryDirs = []string{"memory", "context_engine", "model-providers", "cron_providers", "computer_use"}

// Truthy reports whether an environment value switches a feature on:
// 1, true, yes or on, case-insensitively.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Discover finds every plugin and returns the winner of each key, sorted by
// key, with the warnings met on the way.
func Discover(opts Options) ([]*Candidate, []Warning) {
	var warns []Warning
	var all []*Candidate
	for _, b := range opts.Builtins {
		if b.Manifest == nil || b.Manifest.Name == "" {
			warns = append(warns, Warning{Message: "a compiled-in plugin has no manifest name; skipping it"})
			continue
		}
		key := b.Manifest.Name
		if b.Category != "" {
			key = b.Category + "/" + key
		}
		all = append(all, &Candidate{Key: key, Manifest: b.Manifest, Source: SourceBundled, Builtin: true, Category: b.Category})
	}
	// The entry-point scan (a stat per installed distribution even when cached)
	// overlaps the directory scans; its results still come last.
	var epCands []*Candidate
	var epWarns []Warning
	epDone := make(chan struct{})
	go func() {
		defer close(epDone)
		if len(opts.SitePackages) > 0 {
			epCands, epWarns = scanEntryPoints(opts.SitePackages, opts.EntryPointCache)
		}
	}()
	roots := []struct {
		dir string
		src Source
	}{{opts.BundledDir, SourceBundled}, {opts.UserDir, SourceUser}, {opts.ProjectDir, SourceProject}}
	for _, r := range roots {
		if r.dir == "" {
			continue
		}
		c, w := scanRoot(r.dir, r.src)
		all = append(all, c...)
		warns = append(warns, w...)
		c, w = scanProviders(r.dir, r.src)
		all = append(all, c...)
		warns = append(warns, w...)
	}
	<-epDone
	all = append(all, epCands...)
	warns = append(warns, epWarns...)
	winners, w := resolveWinners(all)
	return winners, append(warns, w...)
}

// slot is one directory under a source root that may hold a plugin.
type slot struct {
	dir, prefix string
	depth       int
	cand        *Candidate
	warns       []Warning
	noManifest  bool
	children    []*slot // a category's plugin directories
}

// scanRoot walks one source root. Listing directories is serial and cheap;
// loading the manifests (the system calls and the parsing) runs on a
// bounded pool, one level at a time, and the results are read back in walk
// order so precedence never depends on scheduling.
func scanRoot(root string, src Source) ([]*Candidate, []Warning) {
	var warns []Warning
	top, err := listDir(root, "", 0, &warns)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warns = append(warns, unreadable(root, err))
		}
		return nil, warns
	}
	loadAll(top, src)
	var level2 []*slot
	for _, s := range top {
		if s.noManifest { // neither plugin.yaml nor plugin.json: a category
			sub := filepath.Base(s.dir)
			if s.children, err = listDir(s.dir, sub, 1, &s.warns); err != nil {
				s.warns = append(s.warns, unreadable(s.dir, err))
			}
			level2 = append(level2, s.children...)
		}
	}
	loadAll(level2, src)
	for _, s := range level2 {
		if s.noManifest && !s.portableInCategory() {
			s.warns = append(s.warns, Warning{Path: s.dir, Message: fmt.Sprintf("Skipping %s (no plugin.yaml, depth cap reached)", s.dir)})
		}
	}
	var out []*Candidate
	for _, s := range top {
		out, warns = s.collect(out, warns)
	}
	return out, warns
}

func (s *slot) collect(out []*Candidate, warns []Warning) ([]*Candidate, []Warning) {
	warns = append(warns, s.warns...)
	if s.cand != nil {
		out = append(out, s.cand)
	}
	for _, c := range s.children {
		out, warns = c.collect(out, warns)
	}
	return out, warns
}

// portableInCategory reports (and notes) a manifest-less directory in a category that
// holds a plugin.json: typically another agent's manifest inside a plugin
// repository, neither loaded nor entered. Portable packages load from the
// top of a source root only.
func (s *slot) portableInCategory() bool {
	if !exists(filepath.Join(s.dir, manifest.PortableFile)) {
		return false
	}
	s.warns = append(s.warns, Warning{Path: s.dir, Level: LevelDebug, Message: fmt.Sprintf("Skipping %s: a portable plugin.json package inside a category directory is not loaded; move it to the top of the plugins directory", s.dir)})
	return true
}

// loadPortable reads a top-level directory's plugin.json (Agent Plugins v1).
// It reports whether the directory is a portable package (loaded, or
// skipped with a warning), so it is not entered as a category.
func (s *slot) loadPortable(src Source) bool {
	m, mw, err := manifest.LoadPortable(s.dir)
	if errors.Is(err, manifest.ErrNoPortable) {
		return false
	}
	file := filepath.Join(s.dir, manifest.PortableFile)
	for _, w := range mw {
		s.warns = append(s.warns, Warning{Path: file, Message: w})
	}
	if err != nil {
		s.warns = append(s.warns, Warning{Path: file, Message: fmt.Sprintf("Skipping portable plugin at %s: %v", s.dir, err)})
		return true
	}
	m.SkillNamespace = manifest.PortableNamespace(m.Name, m.Name)
	s.cand = &Candidate{Key: m.Name, Manifest: m, Source: src, Dir: s.dir}
	if src == SourceUser {
		_, err := os.Lstat(filepath.Join(s.dir, ".git"))
		s.cand.GitCheckout = err == nil
	}
	return true
}

// listDir returns a slot per child directory of dir, in name order, leaving
// out hidden and dunder entries and, at the top, the sub-category dirs.
func listDir(dir, prefix string, depth int, warns *[]Warning) ([]*slot, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var out []*slot
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // .git, .hermes-staging-*, editor droppings
		}
		child := filepath.Join(dir, name)
		if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") {
			*warns = append(*warns, Warning{Path: child, Level: LevelDebug, Message: fmt.Sprintf("Skipping dunder plugin path %s", child)})
			continue
		}
		if depth == 0 && isSubCategory(name) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			// Linked plugin dirs (nix-managed-*) count as directories.
			fi, err := os.Stat(child)
			isDir = err == nil && fi.IsDir()
		}
		if isDir {
			out = append(out, &slot{dir: child, prefix: prefix, depth: depth})
		}
	}
	return out, nil
}

func isSubCategory(name string) bool {
	for _, s := range SubCategoryDirs {
		if s == name {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func canList(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == nil || errors.Is(err, io.EOF)
}

func unreadable(dir string, err error) Warning {
	return Warning{Path: dir, Message: fmt.Sprintf("Skipping unreadable plugin directory %s: %v", dir, unwrapPath(err))}
}

// unwrapPath drops the path from an *fs.PathError: the messages name it already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parallelThreshold is the slot count from which loading fans out; below it
// the goroutine handoff costs more than it saves.
const parallelThreshold = 8

func loadAll(slots []*slot, src Source) {
	workers := min(runtime.GOMAXPROCS(0), len(slots))
	if len(slots) < parallelThreshold || workers < 2 {
		for _, s := range slots {
			s.load(src)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(slots)); i = next.Add(1) - 1 {
				slots[i].load(src)
			}
		}()
	}
	wg.Wait()
}

func (s *slot) load(src Source) {
	m, mw, err := manifest.LoadDir(s.dir)
	if errors.Is(err, manifest.ErrNoManifest) {
		if s.depth > 0 || !s.loadPortable(src) {
			s.noManifest = true
		}
		return
	}
	path := s.dir
	if m != nil {
		path = m.File
	}
	for _, w := range mw {
		s.warns = append(s.warns, Warning{Path: path, Message: w})
	}
	if err != nil {
		var se *manifest.SyntaxError
		var pe *fs.PathError
		switch {
		case errors.As(err, &se):
			s.warns = append(s.warns, Warning{Path: se.File, Message: fmt.Sprintf("Failed to parse %v; skipping this plugin until the manifest is fixed", se)})
		case errors.As(err, &pe) && pe.Op == "open" && errors.Is(err, fs.ErrPermission) && !canList(s.dir):
			s.warns = append(s.warns, unreadable(s.dir, err))
		default:
			s.warns = append(s.warns, Warning{Path: path, Message: fmt.Sprintf("Skipping plugin at %s: %v", s.dir, err)})
		}
		return
	}
	if len(m.UnknownFields) > 0 && m.ManifestVersion < 2 {
		s.warns = append(s.warns, Warning{Path: path, Level: LevelDebug,
			Message: fmt.Sprintf("%s: unknown manifest field(s) ignored: %s (newer manifest schema or a typo; the plugin still loads)", path, strings.Join(m.UnknownFields, ", "))})
	}
	key := m.Name
	if s.prefix != "" {
		key = s.prefix + "/" + filepath.Base(s.dir)
	}
	s.cand = &Candidate{Key: key, Manifest: m, Source: src, Dir: s.dir}
	if src == SourceUser {
		// `plugins list` labels a user plugin that is a git checkout "git"; checking
		// here puts the stat on the parallel pool.
		_, err := os.Lstat(filepath.Join(s.dir, ".git"))
		s.cand.GitCheckout = err == nil
	}
}

// resolveWinners keeps the last candidate of each key, except that a user
// or project plugin claiming a bundled key from a differently named
// directory is an impostor and is skipped: `plugins enable kanban` must never
// activate unrelated code under a bundled plugin's name.
func resolveWinners(all []*Candidate) ([]*Candidate, []Warning) {
	var warns []Warning
	winners := make(map[string]*Candidate, len(all))
	// The bundled claim of each key is kept apart: once a legitimate user copy
	// has replaced it, a later project (or second user) claim from another
	// directory name is still an impostor of the bundled plugin.
	bundledClaims := make(map[string]*Candidate)
	for _, c := range all {
		prev, taken := winners[c.Key]
		if orig, ok := bundledClaims[c.Key]; ok && (c.Source == SourceUser || c.Source == SourceProject) {
			own, bundled := filepath.Base(c.Dir), bundledDirName(orig)
			if own != bundled {
				warns = append(warns, Warning{Path: c.Dir, Message: fmt.Sprintf(
					"Ignoring %s plugin at %s: its manifest name '%s' is a bundled plugin's key but the directory is named '%s'; rename the directory to '%s' to override the bundled plugin",
					c.Source, c.Dir, c.Key, own, bundled)})
				continue
			}
			warns = append(warns, Warning{Path: c.Dir, Level: LevelInfo, Message: fmt.Sprintf(
				"Plugin '%s' at %s (%s) shadows the bundled copy at %s", c.Key, c.Dir, c.Source, where(orig))})
		} else if taken {
			warns = append(warns, Warning{Path: c.Dir, Level: LevelDebug, Message: fmt.Sprintf(
				"Plugin '%s' from %s (%s) overrides the %s copy at %s", c.Key, where(c), c.Source, prev.Source, where(prev))})
		}
		if c.Source == SourceBundled {
			bundledClaims[c.Key] = c
		}
		winners[c.Key] = c
	}
	out := make([]*Candidate, 0, len(winners))
	for _, c := range winners {
		out = append(out, c)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Key < out[k].Key })
	return out, warns
}

// bundledDirName is the directory a same-named override must use. A builtin
// has none; its key's last segment stands in, so a user copy in a directory
// of that name overrides it and any other name is an impostor.
func bundledDirName(c *Candidate) string {
	if c.Builtin || c.Dir == "" {
		return c.Key[strings.LastIndexByte(c.Key, '/')+1:]
	}
	return filepath.Base(c.Dir)
}

func where(c *Candidate) string {
	switch {
	case c.Builtin:
		return "(compiled in)"
	case c.EntryPoint != nil:
		return fmt.Sprintf("entry point %s of %s", c.EntryPoint.Value, c.EntryPoint.Dist)
	}
	return c.Dir
}
