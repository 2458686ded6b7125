// Package scan is the install-time security scanner (reference §9): a static scan of a
// plugin tree against upstream's threat catalogue (skills_guard + plugin_guard v8
// remaps and demotions), plugin-sized structural checks, and one rule of our own that
// upstream lacks: env_exfiltration_correlated (correlate.go).
//
// It is built for speed: one Aho-Corasick pass per file finds every rule's literals,
// regular expressions run only on the lines that hold one, files are scanned in
// parallel, large files are mapped rather than copied, and a line longer than
// maxLineScan is evaluated in windows around its literals, so no input makes the work
// grow faster than its size.
package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ScannerVersion names the rule set and engine in scan results and install metadata.
const ScannerVersion = "plugin-guard-v8+hermes-go-1"

// Options describe the plugin being scanned.
type Options struct {
	// RequiresEnv are the variables the plugin declares in plugin.yaml requires_env:
	// reading them is the plugin's normal business, never evidence of exfiltration.
	RequiresEnv []string
	// Python is the interpreter that runs the Python analysis (python.go): the one
	// plugins run with. Empty leaves the analysis out (line rules only).
	Python string
	// Source is where the tree came from ("git:owner/repo", "local"); it appears in
	// the report header. Empty means the directory name, as upstream.
	Source string
}

// Finding is one rule match (or structural anomaly). Line is 0 for structural ones.
type Finding struct {
	PatternID   string `json:"pattern_id"`
	Severity    string `json:"severity"`
	Category    string `json:"category"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	Match       string `json:"match"`
	Description string `json:"description"`
	// Chain is a source-to-sink finding's steps, source first (py_source_to_network).
	Chain []string `json:"chain,omitempty"`
}

// Result is the outcome of scanning one plugin tree.
type Result struct {
	Name           string
	Source         string
	Verdict        string // "safe" | "caution" | "dangerous"
	Findings       []Finding
	Summary        string
	ScannerVersion string
}

// Verdicts.
const (
	VerdictSafe      = "safe"
	VerdictCaution   = "caution"
	VerdictDangerous = "dangerous"
)

// Structural limits of plugin_guard (plugins are real codebases, larger than skills).
const (
	maxFileCount   = 400
	maxTotalSizeKB = 10 * 1024
	maxSingleKB    = 1024
)

var excludedDirs = map[string]bool{
	".git": true, "__pycache__": true, "node_modules": true, ".venv": true, "venv": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true, ".tox": true,
}

// scannableExt is upstream's SCANNABLE_EXTENSIONS plus .go: this host runs Go plugins
// natively, so their source is as much the plugin as a Python package is.
var scannableExt = map[string]bool{
	".md": true, ".txt": true, ".py": true, ".sh": true, ".bash": true, ".js": true, ".ts": true, ".rb": true,
	".yaml": true, ".yml": true, ".json": true, ".toml": true, ".cfg": true, ".ini": true, ".conf": true,
	".html": true, ".css": true, ".xml": true, ".tex": true, ".r": true, ".jl": true, ".pl": true, ".php": true,
	".go": true,
}

var binaryExt = map[string]bool{
	".exe": true, ".dll": true, ".so": true, ".dylib": true, ".bin": true, ".dat": true, ".com": true,
	".msi": true, ".dmg": true, ".app": true, ".deb": true, ".rpm": true,
}

// Scan scans the plugin tree at dir (a single file is scanned alone). It fails only
// when dir cannot be scanned at all (missing, unreadable root); everything inside the
// tree that cannot be read or decoded becomes a finding.
func Scan(ctx context.Context, dir string, opts Options) (*Result, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("scan %s: no such file or directory", dir)
		}
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	name := filepath.Base(root)
	s := &scanner{opts: opts}
	if st.IsDir() {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		if err := s.walk(ctx, root); err != nil {
			return nil, err
		}
	} else {
		s.files = append(s.files, fileJob{abs: root, rel: filepath.Base(root), size: st.Size()})
	}
	if opts.Python != "" {
		for _, f := range s.files {
			if strings.EqualFold(filepath.Ext(f.rel), ".py") {
				s.py = startPython(ctx, opts.Python, opts.RequiresEnv)
				break
			}
		}
	}
	if err := s.scanFiles(ctx); err != nil {
		if s.py != nil {
			s.py.finish(nil)
		}
		return nil, err
	}
	pyf := s.pyFindings() // first: it may complete line-scan findings in place
	findings := s.structural
	for _, fs := range s.perFile {
		findings = append(findings, fs...)
	}
	findings = append(findings, pyf...)
	findings = mergeV2(findings)
	if findings == nil {
		findings = []Finding{}
	}
	src := opts.Source
	if src == "" {
		src = name
	}
	r := &Result{Name: name, Source: src, Findings: findings, ScannerVersion: ScannerVersion}
	r.Verdict = verdict(findings)
	r.Summary = summary(name, r.Verdict, findings)
	return r, nil
}

func verdict(fs []Finding) string {
	v := VerdictSafe
	for _, f := range fs {
		switch f.Severity {
		case sevCritical:
			return VerdictDangerous
		case sevHigh:
			v = VerdictCaution
		}
	}
	return v
}

func summary(name, verdict string, fs []Finding) string {
	if len(fs) == 0 {
		return name + ": clean scan, no threats detected"
	}
	cats := map[string]bool{}
	for _, f := range fs {
		cats[f.Category] = true
	}
	list := make([]string, 0, len(cats))
	for c := range cats {
		list = append(list, c)
	}
	sort.Strings(list)
	return fmt.Sprintf("%s: %s — %d finding(s) in %s", name, verdict, len(fs), strings.Join(list, ", "))
}

// MarshalJSON writes the documented --json shape:
// {"verdict","summary","findings":[...],"scanner_version"}.
func (r *Result) MarshalJSON() ([]byte, error) {
	fs := r.Findings
	if fs == nil {
		fs = []Finding{}
	}
	return json.Marshal(struct {
		Verdict        string    `json:"verdict"`
		Summary        string    `json:"summary"`
		Findings       []Finding `json:"findings"`
		ScannerVersion string    `json:"scanner_version"`
	}{r.Verdict, r.Summary, fs, r.ScannerVersion})
}

type fileJob struct {
	abs, rel string
	size     int64
	other    bool // not a text extension: a script by its shebang, or a binary (binary.go)
}

type scanner struct {
	opts       Options
	root       string
	files      []fileJob
	structural []Finding
	perFile    [][]Finding
	py         *pyRun // the Python analysis (nil: none)
}

func structFinding(id, sev, cat, rel, match, desc string) Finding {
	return Finding{PatternID: id, Severity: sev, Category: cat, File: rel, Match: match, Description: desc}
}

// walk lists the tree without following symlinks (a loop cannot trap it) and with an
// explicit stack (a deep tree cannot exhaust the goroutine stack).
func (s *scanner) walk(ctx context.Context, root string) error {
	s.root = root
	var count int
	var total int64
	stack := []string{""}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		relDir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := os.ReadDir(filepath.Join(root, relDir))
		if err != nil {
			if relDir == "" {
				return fmt.Errorf("scan %s: %w", root, err)
			}
			s.structural = append(s.structural, structFinding("unreadable_file", sevMedium, "structural", relDir,
				"unreadable directory", "directory could not be read, so it was not scanned: "+errText(err)))
			if len(entries) == 0 {
				continue
			}
		}
		// Push subdirectories in reverse so they pop in name order.
		var subdirs []string
		for _, e := range entries {
			name := e.Name()
			rel := name
			if relDir != "" {
				rel = relDir + "/" + name
			}
			t := e.Type()
			switch {
			case t.IsDir():
				if !excludedDirs[name] {
					subdirs = append(subdirs, rel)
				}
			case t&fs.ModeSymlink != 0:
				count++
				s.checkSymlink(root, rel)
			case t.IsRegular():
				count++
				info, err := e.Info()
				if err != nil {
					continue
				}
				size := info.Size()
				total += size
				if size > maxSingleKB*1024 {
					s.structural = append(s.structural, structFinding("oversized_file", sevMedium, "structural", rel,
						fmt.Sprintf("%dKB", size/1024), fmt.Sprintf("file is %dKB (limit: %dKB)", size/1024, maxSingleKB)))
				}
				ext := strings.ToLower(filepath.Ext(name))
				if binaryExt[ext] {
					s.structural = append(s.structural, structFinding("binary_file", sevHigh, "structural", rel,
						"binary: "+ext, "binary/executable file ("+ext+") bundled in plugin (cannot be scanned)"))
				}
				if scannableExt[ext] || name == "SKILL.md" {
					s.files = append(s.files, fileJob{abs: filepath.Join(root, rel), rel: rel, size: size})
				} else if !skipOther[ext] {
					// Scripts without an extension and binaries (binary.go).
					s.files = append(s.files, fileJob{abs: filepath.Join(root, rel), rel: rel, size: size, other: true})
				}
			}
		}
		for i := len(subdirs) - 1; i >= 0; i-- {
			stack = append(stack, subdirs[i])
		}
	}
	if count > maxFileCount {
		s.structural = append(s.structural, structFinding("too_many_files", sevMedium, "structural", "(directory)",
			fmt.Sprintf("%d files", count), fmt.Sprintf("plugin has %d files (limit: %d)", count, maxFileCount)))
	}
	if total > maxTotalSizeKB*1024 {
		s.structural = append(s.structural, structFinding("oversized_bundle", sevMedium, "structural", "(directory)",
			fmt.Sprintf("%dKB", total/1024), fmt.Sprintf("plugin is %dKB total (limit: %dKB)", total/1024, maxTotalSizeKB)))
	}
	return nil
}

// checkSymlink: a link resolving outside the tree is critical (installing it would
// publish a door to the rest of the disk); a dangling or circular one is a note.
func (s *scanner) checkSymlink(root, rel string) {
	abs := filepath.Join(root, rel)
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// Dangling (not a loop): judge where it points, lexically, as Python's
		// non-strict resolve() does upstream.
		target, rerr := os.Readlink(abs)
		if rerr == nil && errors.Is(err, fs.ErrNotExist) && target != "" {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(abs), target)
			}
			if !within(root, filepath.Clean(target)) {
				s.structural = append(s.structural, structFinding("symlink_escape", sevCritical, "traversal", rel,
					"symlink -> "+target, "symlink points outside the plugin directory"))
				return
			}
		}
		s.structural = append(s.structural, structFinding("broken_symlink", sevMedium, "traversal", rel,
			"broken symlink", "broken or circular symlink"))
		return
	}
	if !within(root, resolved) {
		s.structural = append(s.structural, structFinding("symlink_escape", sevCritical, "traversal", rel,
			"symlink -> "+resolved, "symlink points outside the plugin directory"))
	}
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// scanFiles scans the listed files on GOMAXPROCS workers; results keep list order.
func (s *scanner) scanFiles(ctx context.Context) error {
	s.perFile = make([][]Finding, len(s.files))
	workers := min(runtime.GOMAXPROCS(0), len(s.files))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fsc := newFileScanner(s.opts)
			fsc.py = s.py
			for {
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(s.files) {
					return
				}
				s.perFile[i] = fsc.scanPath(s.files[i])
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// pyFindings waits for the Python analysis and merges its findings, dropping those the
// line scan already reported at the same place. A chain that ends where the line scan
// already reported a critical exfiltration (env_exfiltration_correlated) is kept as
// that finding's Chain rather than repeated.
func (s *scanner) pyFindings() []Finding {
	if s.py == nil {
		return nil
	}
	got := s.py.finish(newFileScanner(s.opts))
	s.dropDataOnly(s.py.data)
	have := map[string]bool{}
	exfil := map[string]*Finding{}
	for _, fs := range s.perFile {
		for i := range fs {
			f := &fs[i]
			at := f.File + "\x00" + strconv.Itoa(f.Line)
			have[f.PatternID+"\x00"+at] = true
			if f.Category == "exfiltration" && f.Severity == sevCritical {
				exfil[at] = f
			}
		}
	}
	out := got[:0]
	for _, f := range got {
		at := f.File + "\x00" + strconv.Itoa(f.Line)
		if have[f.PatternID+"\x00"+at] {
			continue
		}
		if x := exfil[at]; x != nil && f.PatternID == idPySourceToNetwork {
			if x.Chain == nil {
				x.Chain = f.Chain
			}
			continue
		}
		out = append(out, f)
	}
	return out
}
