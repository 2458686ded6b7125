package discovery

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Entry-point groups read from installed Python distributions.
const (
	EntryPointsGroup              = "hermes_agent.plugins"
	EntryPointCapabilitiesGroup   = "hermes_agent.plugin_capabilities"
	maxMetadataHeader             = 64 << 10
	maxEntryPointsFile            = 1 << 20
	moduleSourceProbe             = 8192
	distInfoSuffix, eggInfoSuffix = ".dist-info", ".egg-info"
)

type distribution struct {
	site     string
	dir      string // the .dist-info / .egg-info directory
	name     string
	version  string
	metaFile string
	eps      []entryLine // both groups, in file order
}

type entryLine struct {
	group, name, value string
}

// scanEntryPoints reads the entry points of the distributions installed in
// the site directories, without running Python: the metadata files are
// plain text. A distribution installed in several site directories counts
// once, from the first (sys.path order), as importlib.metadata does.
func scanEntryPoints(sites []string, cacheFile string) ([]*Candidate, []Warning) {
	var warns []Warning
	var dists []*distribution
	seen := map[string]bool{}
	cache := loadEPCache(cacheFile)
	dirty := false
	for _, site := range sites {
		fi, err := os.Stat(site)
		if err == nil {
			if cached := cache.lookup(site, fi.ModTime().UnixNano()); cached != nil {
				for _, d := range cached.distributions(site) {
					if norm := normalizeDistName(d.name); !seen[norm] {
						seen[norm] = true
						dists = append(dists, d)
					}
				}
				for rest := cached.Names; rest != ""; {
					var n string
					n, rest, _ = strings.Cut(rest, "\n")
					seen[n] = true
				}
				continue
			}
		}
		entries, err := os.ReadDir(site)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warns = append(warns, Warning{Path: site, Message: fmt.Sprintf("Skipping unreadable site directory %s: %v", site, unwrapPath(err))})
			}
			delete(cache.Sites, site)
			continue
		}
		scan := &siteScan{}
		if fi != nil {
			scan.MTime = fi.ModTime().UnixNano()
		}
		var names, dirs strings.Builder
		stamp := newEPStamp()
		clean := true
		for _, e := range entries {
			d := distFromDir(site, e)
			if d == nil {
				continue
			}
			norm := normalizeDistName(d.name)
			if names.Len() > 0 {
				names.WriteByte('\n')
				dirs.WriteByte('\n')
			}
			names.WriteString(norm)
			dirs.WriteString(e.Name())
			// Stamped before it is read: a change made meanwhile is seen next time.
			mtime, size, absent := statEP(site, e.Name())
			stamp.add(e.Name(), mtime, size)
			var w []Warning
			if !absent {
				d.eps, w = readEntryPoints(filepath.Join(d.dir, "entry_points.txt"))
			}
			if len(w) > 0 {
				// Warnings are shown again next time rather than cached away.
				clean = false
			}
			if len(d.eps) > 0 {
				scan.Dists = append(scan.Dists, cachedOf(d))
			}
			if seen[norm] {
				continue
			}
			seen[norm] = true
			warns = append(warns, w...)
			if len(d.eps) > 0 {
				dists = append(dists, d)
			}
		}
		scan.Names, scan.DistDirs, scan.Stamp = names.String(), dirs.String(), stamp.sum()
		if clean && fi != nil {
			cache.Sites[site] = scan
			dirty = true
		}
	}
	if dirty {
		cache.save(cacheFile)
	}

	// Capabilities are declared as "<plugin>.<capability>" entries pointing
	// at the same object as the plugin, so no plugin code has to run.
	declared := map[string]map[string]bool{} // value -> entry names
	for _, d := range dists {
		for _, ep := range d.eps {
			if ep.group == EntryPointCapabilitiesGroup {
				if declared[ep.value] == nil {
					declared[ep.value] = map[string]bool{}
				}
				declared[ep.value][ep.name] = true
			}
		}
	}

	var out []*Candidate
	byName := map[string]*Candidate{}
	for _, d := range dists {
		metaRead := false
		summary := ""
		for _, ep := range d.eps {
			if ep.group != EntryPointsGroup && ep.group != EntryPointMemoryGroup {
				continue
			}
			key := ep.name
			if ep.group == EntryPointMemoryGroup {
				key = CategoryMemory + "/" + ep.name
			}
			epFile := filepath.Join(d.dir, "entry_points.txt")
			if !manifest.ValidDirName(ep.name) {
				warns = append(warns, Warning{Path: epFile, Message: fmt.Sprintf("%s: entry point name %q cannot name a plugin; skipping it", epFile, ep.name)})
				continue
			}
			if prev := byName[key]; prev != nil {
				warns = append(warns, Warning{Path: epFile, Message: fmt.Sprintf(
					"%s: entry point %q of %s is ignored: %s already provides a plugin with that name; uninstall one of them",
					epFile, ep.name, d.name, prev.EntryPoint.Dist)})
				continue
			}
			if !metaRead {
				metaRead = true
				var w []Warning
				summary, w = d.readMetadata()
				warns = append(warns, w...)
			}
			var caps []string
			for _, c := range manifest.KnownCapabilities() {
				if declared[ep.value][ep.name+"."+c] {
					caps = append(caps, c)
				}
			}
			module := entryPointModule(ep.value)
			kind := manifest.DetectKind(moduleSource(sites, module))
			if kind == "" {
				kind = "standalone"
			}
			m := &manifest.Manifest{
				Name: ep.name, Version: d.version, Description: summary, Kind: kind,
				ManifestVersion: 1, Capabilities: caps, Runtime: "python", File: epFile,
				Raw: map[string]any{"name": ep.name, "version": d.version, "description": summary},
			}
			c := &Candidate{
				Key: key, Manifest: m, Source: SourceEntrypoint, Dir: d.site,
				EntryPoint: &EntryPoint{Name: ep.name, Value: ep.value, Module: module, Dist: d.name, DistVersion: d.version, Summary: summary},
			}
			if ep.group == EntryPointMemoryGroup {
				c.Category, m.Kind = CategoryMemory, "exclusive"
			}
			byName[key] = c
			out = append(out, c)
		}
	}
	return out, warns
}

// distFromDir recognises "<name>-<version>.dist-info" and
// "<name>-<version>[-pyX.Y].egg-info" directories.
func distFromDir(site string, e fs.DirEntry) *distribution {
	name := e.Name()
	var base, meta string
	switch {
	case strings.HasSuffix(name, distInfoSuffix):
		base, meta = strings.TrimSuffix(name, distInfoSuffix), "METADATA"
	case strings.HasSuffix(name, eggInfoSuffix):
		base, meta = strings.TrimSuffix(name, eggInfoSuffix), "PKG-INFO"
	default:
		return nil
	}
	dir := filepath.Join(site, name)
	if !e.IsDir() {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return nil
		}
	}
	dname, rest, _ := strings.Cut(base, "-")
	version, _, _ := strings.Cut(rest, "-")
	if dname == "" {
		return nil
	}
	return &distribution{site: site, dir: dir, name: dname, version: version, metaFile: filepath.Join(dir, meta)}
}

// normalizeDistName folds a distribution name the way packaging tools
// compare them: case-insensitive, with runs of "-", "_" and "." equal.
func normalizeDistName(n string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(n) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// readEntryPoints parses an entry_points.txt (INI-like: [group] headers,
// "name = value" lines, # comments), keeping the two groups of interest.
func readEntryPoints(path string) ([]entryLine, []Warning) {
	data, err := readHead(path, maxEntryPointsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []Warning{{Path: path, Message: fmt.Sprintf("Skipping unreadable entry points file %s: %v", path, unwrapPath(err))}}
	}
	var out []entryLine
	var warns []Warning
	group := ""
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' && line[len(line)-1] == ']' {
			group = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		if group != EntryPointsGroup && group != EntryPointCapabilitiesGroup && group != EntryPointMemoryGroup {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			warns = append(warns, Warning{Path: path, Message: fmt.Sprintf("%s:%d: entry point line %q is not \"name = module[:attr]\"; skipping it", path, n+1, line)})
			continue
		}
		out = append(out, entryLine{group: group, name: name, value: value})
	}
	return out, warns
}

// readMetadata returns the distribution's Summary, and fixes its name and
// version from the Name and Version headers, which are authoritative over
// the directory name.
func (d *distribution) readMetadata() (string, []Warning) {
	data, err := readHead(d.metaFile, maxMetadataHeader)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", []Warning{{Path: d.metaFile, Level: LevelDebug, Message: fmt.Sprintf("Cannot read %s: %v", d.metaFile, unwrapPath(err))}}
	}
	headers := parseHeaders(data)
	if v := headers["name"]; v != "" {
		d.name = v
	}
	if v := headers["version"]; v != "" {
		d.version = v
	}
	return headers["summary"], nil
}

// parseHeaders reads the RFC 822 header block of a METADATA / PKG-INFO file
// (lowercased keys, first occurrence wins, continuation lines joined).
func parseHeaders(data []byte) map[string]string {
	h := map[string]string{}
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxMetadataHeader)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break // the body (long description) follows
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != "" {
				h[last] += " " + strings.TrimSpace(line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			last = ""
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if _, dup := h[k]; dup {
			last = ""
			continue
		}
		h[k], last = strings.TrimSpace(v), k
	}
	return h
}

func readHead(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// entryPointModule is the module part of "pkg.mod:attr [extra]".
func entryPointModule(value string) string {
	m, _, _ := strings.Cut(value, ":")
	m, _, _ = strings.Cut(m, "[")
	m = strings.TrimSpace(m)
	for _, r := range m {
		if r != '.' && r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r > 0x7f) {
			return ""
		}
	}
	return m
}

// moduleSource returns the head of a module's source file, found without
// importing anything: the first site directory holding the top-level
// package (or module) decides, then the dotted path is followed inside it.
// "" when the source cannot be found (namespace packages, extensions, zips).
func moduleSource(sites []string, module string) string {
	parts := strings.Split(module, ".")
	if module == "" || contains(parts, "") {
		return ""
	}
	for _, site := range sites {
		pkg := filepath.Join(site, parts[0])
		if isFile(filepath.Join(pkg, "__init__.py")) {
			return readSource(resolveSubmodule(pkg, parts[1:]))
		}
		if isFile(pkg + ".py") {
			if len(parts) == 1 {
				return readSource(pkg + ".py")
			}
			return "" // a plain module has no submodules
		}
	}
	return ""
}

func resolveSubmodule(pkg string, rest []string) string {
	origin := filepath.Join(pkg, "__init__.py")
	for i, part := range rest {
		sub := filepath.Join(pkg, part)
		switch {
		case isFile(filepath.Join(sub, "__init__.py")):
			pkg, origin = sub, filepath.Join(sub, "__init__.py")
		case isFile(sub + ".py"):
			if i != len(rest)-1 {
				return ""
			}
			return sub + ".py"
		default:
			return ""
		}
	}
	return origin
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func readSource(path string) string {
	if path == "" {
		return ""
	}
	b, err := readHead(path, moduleSourceProbe)
	if err != nil {
		return ""
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
