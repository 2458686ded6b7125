// Package install installs, updates and removes plugins from git: exact pins,
// private repositories, atomic publication into the plugins directory and the
// install metadata (.install-metadata.json). The CLI (internal/cli) adds prompts and
// consent on top; a catalog or pack command builds a Request and calls Install.
package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Verdicts of the install-time security scan.
const (
	VerdictSafe      = "safe"
	VerdictCaution   = "caution"
	VerdictDangerous = "dangerous"
)

// ScanReport is what the install path needs from a security scan.
type ScanReport struct {
	Verdict string
	// Report is the human-readable report (findings, verdict).
	Report string
	// Blocking describes the findings that make a verdict dangerous, one per line.
	Blocking []string
	// Findings counts all findings.
	Findings int
}

// ScanTarget describes the tree being scanned.
type ScanTarget struct {
	// Name is the plugin name (the staged folder has a temporary name).
	Name string
	// RequiresEnv are the manifest's requires_env names: a plugin reading its own
	// key is expected.
	RequiresEnv []string
	// Source is the canonical source, for the report.
	Source string
}

// Scanner scans a staged plugin tree before it is published (and after an update).
type Scanner interface {
	Scan(ctx context.Context, dir string, target ScanTarget) (*ScanReport, error)
}

// ScannerFunc adapts a function to Scanner.
type ScannerFunc func(ctx context.Context, dir string, target ScanTarget) (*ScanReport, error)

// Scan calls f.
func (f ScannerFunc) Scan(ctx context.Context, dir string, target ScanTarget) (*ScanReport, error) {
	return f(ctx, dir, target)
}

// Installer owns one plugins directory.
type Installer struct {
	// PluginsDir is $HERMES_HOME/plugins.
	PluginsDir string
	Git        *Git
	// Credentials looks up credentials for private https repositories (nil: none).
	Credentials *Credentials
	// Scanner is the install-time security scan; nil skips scanning with a note.
	Scanner Scanner
	// Log receives progress and notes (stderr in the CLI); nil discards them.
	Log io.Writer
	// Progress, when set, is called around long git work ("Cloning …") and returns
	// a function that ends it; the CLI shows a spinner on a TTY only.
	Progress func(msg string) (done func())

	// hookStaged is called with the staged tree before publication (tests use it to
	// stop a process mid-install).
	hookStaged func(dir string)
}

// Request is one install. Identifier, or URL (+ Subdir) for callers that already
// resolved a source (catalog, packs).
type Request struct {
	Identifier string
	URL        string
	Subdir     string
	// Ref pins a full 40-hex commit; "" installs the default branch (or keeps an
	// existing pin for the same source).
	Ref string
	// Force replaces an existing plugin of the same name and installs despite a
	// caution verdict (--force).
	Force bool
	// Replace replaces an existing plugin of the same name and does nothing more
	// (--replace, a hermes:// link's force=1): a caution verdict is still asked about.
	Replace bool
	// Catalog is provenance recorded in the metadata row.
	Catalog *CatalogRef
	// KillList is the catalog's kill list: a plugin it names (by its name, the
	// catalog name it is installed under, or its source) is refused before
	// anything is fetched when the source or catalog name matches, and before
	// publication when the manifest's name does, unless AllowRemoved; then the
	// row records allow_removed, which lets it load.
	KillList     catalog.KillList
	AllowRemoved bool
	// Replaces names the installed plugin this install updates (a catalog
	// install re-pinned to the catalog's new commit): it must exist, the new
	// tree must carry the same name, and ConfirmGrowth is asked when the new
	// manifest declares tools or hooks the installed one does not; nil, or a no,
	// leaves everything as it was (*NotAppliedError).
	Replaces      string
	ConfirmGrowth func(g Growth) bool
	// ScanDisabled skips the scan (plugins.scan_on_install: false).
	ScanDisabled bool
	// ConfirmCaution is asked when the scan says caution and Force is not set; nil
	// (no terminal) refuses.
	ConfirmCaution func(report *ScanReport) bool
}

// Result is what an install did.
type Result struct {
	Name     string
	Dir      string
	Source   Source
	Revision string
	Pinned   bool
	Replaced bool
	Manifest *manifest.Manifest
	Scan     *ScanReport
	// Created lists files made from *.example files.
	Created []string
	// Warnings are manifest warnings and notes worth showing.
	Warnings []string
	// Removed is set when the kill list names the plugin and it was installed
	// anyway (AllowRemoved).
	Removed *catalog.Removed
}

// Error is an install failure meant for the user as is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func userErr(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// ErrScanBlocked marks a dangerous verdict or a refused caution.
var ErrScanBlocked = errors.New("security scan blocked the plugin")

func (in *Installer) logf(format string, args ...any) {
	if in.Log != nil {
		fmt.Fprintf(in.Log, format+"\n", args...)
	}
}

func (in *Installer) metaPath() string { return filepath.Join(in.PluginsDir, MetadataFile) }

func (in *Installer) lock(ctx context.Context) (func(), error) {
	unlock, err := lockPlugins(ctx, in.PluginsDir, func(p string) {
		in.logf("Waiting for another hermes to finish with %s ...", in.PluginsDir)
	})
	if err != nil {
		return nil, err
	}
	if err := recoverStaging(in.PluginsDir, in.metaPath(), func(s string) { in.logf("%s", s) }); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// Install fetches, checks, scans and publishes one plugin. On any error nothing is
// left behind: the plugins directory and metadata are as they were. When ctx is
// cancelled (Ctrl-C) the error is an *InterruptedError.
func (in *Installer) Install(ctx context.Context, req Request) (*Result, error) {
	res, err := in.install(ctx, req)
	return res, interrupted(ctx, err, "nothing was installed.")
}

func (in *Installer) install(ctx context.Context, req Request) (*Result, error) {
	ref := ""
	if req.Ref != "" {
		var err error
		if ref, err = ValidateRef(req.Ref); err != nil {
			return nil, &Error{Msg: err.Error()}
		}
	}
	var src Source
	switch {
	case req.URL != "":
		var err error
		if src, err = checkSubdir(Source{URL: req.URL, Subdir: strings.Trim(req.Subdir, "/")}); err != nil {
			return nil, &Error{Msg: err.Error()}
		}
	default:
		var err error
		if src, err = ParseIdentifier(req.Identifier); err != nil {
			return nil, &Error{Msg: err.Error()}
		}
	}
	var embedded *Credential
	if u, p, ok := urlUserinfo(src.URL); ok {
		if u == "" {
			u = "x-access-token"
		}
		embedded = &Credential{Username: u, Password: p, Source: "URL"}
		src.URL = ScrubURL(src.URL)
	}
	res := &Result{Source: src}
	// The source (or the catalog name) can be judged before anything is fetched.
	if err := checkKillList(req, res, "", src); err != nil {
		return nil, err
	}
	if req.Replaces != "" && (!safeName(req.Replaces) || !isDir(filepath.Join(in.PluginsDir, req.Replaces))) {
		return nil, in.notInstalled(req.Replaces)
	}
	if src.Insecure() {
		in.logf("Warning: using insecure/local URL scheme (%s); prefer https:// or ssh for plugins from others.", strings.SplitN(src.URL, "://", 2)[0])
	}

	unlock, err := in.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	md, err := ReadMetadata(in.metaPath())
	if err != nil {
		return nil, err
	}
	// A pin is kept across reinstalls of the same source; moving it takes --ref.
	if ref == "" {
		var pinned []Row
		for _, r := range md.Rows {
			if r.Pinned && r.Source == src.Canonical() && IsSHA(r.Revision) {
				pinned = append(pinned, r)
			}
		}
		if len(pinned) == 1 {
			ref = strings.ToLower(pinned[0].Revision)
			in.logf("Keeping the existing pin %s for %s (pass --ref to move it).", ref[:12], src.Canonical())
		}
	}

	stage, err := os.MkdirTemp(in.PluginsDir, installPrefix)
	if err != nil {
		return nil, fmt.Errorf("create staging folder: %w", err)
	}
	published := false
	defer func() {
		if !published {
			_ = os.RemoveAll(stage)
		}
	}()

	repo := filepath.Join(stage, repoTree)
	rev, err := in.fetch(ctx, src, ref, repo, embedded)
	if err != nil {
		return nil, err
	}
	tree, err := extract(repo, src.Subdir, filepath.Join(stage, stagedTree))
	if err != nil {
		return nil, err
	}
	res.Revision, res.Pinned = rev, req.Ref != "" || ref != ""
	m, name, warns, err := checkManifest(tree, src)
	if err != nil {
		return nil, err
	}
	res.Manifest, res.Name, res.Warnings = m, name, append(warns, res.Warnings...)
	res.Dir = filepath.Join(in.PluginsDir, name)
	if res.Removed == nil {
		if err := checkKillList(req, res, name, src); err != nil {
			return nil, err
		}
	}

	if err := in.scan(ctx, tree, m, src, req, res); err != nil {
		return nil, err
	}

	target := res.Dir
	if exists(target) {
		if !req.Force && !req.Replace && req.Replaces == "" {
			return nil, userErr("Plugin '%s' already exists. Use force reinstall (--force) or run `hermes plugins update %s`.", name, name)
		}
		if old, ok := md.Rows[name]; ok && old.Pinned && req.Ref == "" && ref == "" {
			return nil, userErr("Plugin '%s' is pinned. Reinstall it with an explicit --ref <40-character commit SHA> to change its source or revision.", name)
		}
		res.Replaced = true
	}
	if req.Replaces != "" {
		if err := confirmGrowth(req, name, target, m); err != nil {
			return nil, err
		}
	}
	// allow_removed records a deliberate bypass only: a plugin the kill list did
	// not name when it was installed must not load if it is removed later.
	row := Row{Pinned: res.Pinned, Revision: rev, Source: src.Canonical(), UpdateURL: m.UpdateURL, Catalog: req.Catalog, AllowRemoved: res.Removed != nil}
	if old, ok := md.Rows[name]; ok && old.Extra != nil {
		row.Extra = old.Extra
	}
	if in.hookStaged != nil {
		in.hookStaged(tree)
	}
	if err := publish(in.PluginsDir, stage, name, row, in.metaPath()); err != nil {
		return nil, err
	}
	published = true
	_ = os.RemoveAll(stage)
	res.Created = copyExamples(target)
	return res, nil
}

// checkKillList refuses a plugin the kill list names, by the catalog name it is
// installed under, its name ("" before the manifest is read) or its source, unless
// req.AllowRemoved; then it notes the bypass in res.
func checkKillList(req Request, res *Result, name string, src Source) error {
	var names []string
	if req.Catalog != nil && req.Catalog.Name != "" {
		names = append(names, req.Catalog.Name)
	}
	if name != "" {
		names = append(names, name)
	}
	k, ok := req.KillList.Match(names, src.Canonical())
	if !ok {
		return nil
	}
	who := src.Canonical()
	if k.Name != "" {
		who += " ('" + k.Name + "')"
		if _, byName := (catalog.KillList{{Name: k.Name}}).Match(names, ""); byName {
			who = "'" + k.Name + "'"
		}
	}
	if !req.AllowRemoved {
		return userErr("%s was removed from the Hermes plugin catalog%s\nInstalling it is refused; nothing was installed. If you have reviewed it and still want it, pass --allow-removed.", who, k.Why())
	}
	res.Removed = &k
	res.Warnings = append(res.Warnings, fmt.Sprintf("%s was removed from the Hermes plugin catalog (%s); installing it anyway (--allow-removed).", who, k.ReasonText()))
	return nil
}

// fetch clones src into repo at ref (or the default branch) and returns HEAD.
func (in *Installer) fetch(ctx context.Context, src Source, ref, repo string, embedded *Credential) (string, error) {
	if in.Progress != nil {
		done := in.Progress("Cloning " + src.Canonical())
		defer done()
	}
	g := in.Git
	op := func(env, secrets []string) error {
		_ = os.RemoveAll(repo)
		if ref == "" {
			_, err := g.RunNet(ctx, "", env, secrets, "clone", "--quiet", "--depth", "1", "--no-recurse-submodules", "--", src.URL, repo)
			return err
		}
		if _, err := g.Run(ctx, "", nil, nil, "init", "--quiet", repo); err != nil {
			return err
		}
		if _, err := g.Run(ctx, repo, nil, nil, "remote", "add", "origin", src.URL); err != nil {
			return err
		}
		_, err := g.RunNet(ctx, repo, env, secrets, "fetch", "--quiet", "--depth", "1", "--no-tags", "--no-recurse-submodules", "origin", ref)
		if err != nil && !needsCredentials(err) {
			// Servers that refuse to serve an unadvertised commit: fetch everything
			// and look for the commit locally.
			var ge *GitError
			if errors.As(err, &ge) && unadvertisedRE.MatchString(ge.Stderr) {
				_, err = g.RunNet(ctx, repo, env, secrets, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin", "+refs/heads/*:refs/remotes/origin/*")
			}
		}
		return err
	}
	if err := in.Credentials.withCredentials(ctx, src.URL, embedded, op); err != nil {
		return "", userErr("Git clone failed for %s:\n%s", src.Canonical(), gitMessage(err))
	}
	if ref != "" {
		if _, err := g.Run(ctx, repo, nil, nil, "checkout", "--quiet", "--detach", ref); err != nil {
			return "", userErr("Commit %s is not in %s (or the server would not serve it): %s\nCheck the SHA with `git ls-remote` or the repository's history.", ref, src.Canonical(), gitMessage(err))
		}
	}
	head, err := g.Run(ctx, repo, nil, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", userErr("cannot read the checked-out revision: %s", gitMessage(err))
	}
	head = strings.ToLower(head)
	if ref != "" && head != ref {
		return "", userErr("Checked-out revision '%s' does not match requested commit '%s'.", head, ref)
	}
	return head, nil
}

func gitMessage(err error) string {
	var ge *GitError
	if errors.As(err, &ge) {
		s := strings.TrimSpace(ge.Stderr)
		if s == "" {
			s = ge.Err.Error()
		}
		return s + tail(err, ge)
	}
	return err.Error()
}

// tail keeps hints appended around a GitError (the private-repository hint).
func tail(err error, ge *GitError) string {
	s := err.Error()
	if i := strings.Index(s, ge.Error()); i >= 0 {
		return s[i+len(ge.Error()):]
	}
	return ""
}

// extract cuts the plugin out of the clone: the whole clone, or only subdir (a
// subdirectory install carries no .git). Symlinks that leave the plugin are refused.
func extract(repo, subdir, dst string) (string, error) {
	src := repo
	if subdir != "" {
		rootReal, err := filepath.EvalSymlinks(repo)
		if err != nil {
			return "", err
		}
		p := filepath.Join(repo, filepath.FromSlash(subdir))
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(p); lerr == nil {
				return "", userErr("Subdirectory '%s' escapes the repository (a symlink that does not resolve inside it).", subdir)
			}
			return "", userErr("Subdirectory '%s' does not exist in the repository.", subdir)
		}
		if err != nil {
			return "", userErr("Subdirectory '%s' cannot be read: %v", subdir, err)
		}
		if !within(rootReal, real) || real == filepath.Join(rootReal, ".git") || within(filepath.Join(rootReal, ".git"), real) {
			return "", userErr("Subdirectory '%s' escapes the repository (it resolves outside it through a symlink).", subdir)
		}
		st, err := os.Stat(real)
		if err != nil || !st.IsDir() {
			return "", userErr("Subdirectory '%s' is not a directory.", subdir)
		}
		src = real
	}
	if err := checkSymlinks(src); err != nil {
		return "", err
	}
	if err := os.Rename(src, dst); err != nil {
		return "", fmt.Errorf("stage plugin tree: %w", err)
	}
	return dst, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkSymlinks refuses a tree with a symlink that is absolute or resolves outside
// the tree: once published, it would reach into the user's files.
func checkSymlinks(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != root {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		resolved := target
		if !filepath.IsAbs(target) {
			resolved = filepath.Join(filepath.Dir(p), target)
		}
		if filepath.IsAbs(target) || !within(root, resolved) {
			return userErr("Symlink '%s' -> '%s' escapes the plugin directory; refusing to install it.", filepath.ToSlash(rel), target)
		}
		return nil
	})
}

// checkManifest reads the staged manifest strictly and settles the plugin name.
func checkManifest(tree string, src Source) (*manifest.Manifest, string, []string, error) {
	m, warns, err := manifest.LoadDir(tree)
	if errors.Is(err, manifest.ErrNoManifest) {
		return checkPortable(tree, src)
	}
	if err != nil {
		return nil, "", nil, userErr("Invalid plugin manifest: %v", err)
	}
	if v, ok := m.Raw["manifest_version"]; ok {
		n, isInt := asInt(v)
		if !isInt {
			return nil, "", nil, userErr("invalid manifest_version '%v' (expected an integer)", v)
		}
		if n > manifest.SupportedManifestVersion {
			return nil, "", nil, userErr("Plugin requires manifest_version %d, but this installer only supports up to %d. Update hermes and try again.", n, manifest.SupportedManifestVersion)
		}
	}
	name := ""
	if v, ok := m.Raw["name"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr || !safeName(s) {
			return nil, "", nil, userErr("Unsafe plugin name %q in plugin.yaml: a name must not be empty, '.' or '..', start with '.', or contain '/', '\\' or '..'.", fmt.Sprint(v))
		}
		name = s
	} else if src.Subdir != "" {
		name = filepath.Base(filepath.FromSlash(src.Subdir))
	} else {
		name = src.RepoName()
	}
	if !safeName(name) {
		return nil, "", nil, userErr("Cannot derive a safe plugin name (got %q); set name: in plugin.yaml.", name)
	}
	return m, name, warns, nil
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

func (in *Installer) scan(ctx context.Context, tree string, m *manifest.Manifest, src Source, req Request, res *Result) error {
	if req.ScanDisabled {
		return nil
	}
	if in.Scanner == nil {
		in.logf("Note: security scan skipped (no scanner in this build).")
		return nil
	}
	var env []string
	for _, e := range m.RequiresEnv {
		env = append(env, e.Name)
	}
	rep, err := in.Scanner.Scan(ctx, tree, ScanTarget{Name: res.Name, RequiresEnv: env, Source: src.Canonical()})
	if err != nil {
		return fmt.Errorf("security scan: %w", err)
	}
	res.Scan = rep
	switch rep.Verdict {
	case VerdictDangerous:
		return &Error{Msg: blockedMessage("Blocked (dangerous verdict, %d findings). --force does not override a dangerous verdict.", rep)}
	case VerdictCaution:
		if req.Force {
			in.logf("Force-installed despite caution verdict (%d findings).", rep.Findings)
			return nil
		}
		if req.ConfirmCaution != nil && req.ConfirmCaution(rep) {
			return nil
		}
		return &Error{Msg: blockedMessage("Requires confirmation (caution verdict, %d findings); nothing was installed. Re-run on a terminal to confirm, or pass --force if you trust the source.", rep)}
	}
	return nil
}

func blockedMessage(reasonFmt string, rep *ScanReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Security scan blocked plugin install: "+reasonFmt, rep.Findings)
	if len(rep.Blocking) > 0 {
		b.WriteString("\nBlocking findings:\n")
		for _, f := range rep.Blocking {
			b.WriteString("  " + f + "\n")
		}
	}
	if rep.Report != "" {
		b.WriteString("\n" + strings.TrimRight(rep.Report, "\n") + "\n")
	}
	b.WriteString("\nReview the findings above. Install only plugins from sources you trust. (Scanning can be turned off with plugins.scan_on_install: false in config.yaml.)")
	return b.String()
}

// publish puts the staged tree in place and records the metadata row. A new plugin
// is one rename; a replaced one is swapped in with one atomic exchange (Linux), or
// moved aside and renamed in elsewhere. txn.json, written first, lets the next run
// finish or undo an interrupted publish; a failure here puts the old tree back.
func publish(pluginsDir, stage, name string, row Row, metaPath string) error {
	staged := filepath.Join(stage, stagedTree)
	id, ok := idOf(staged)
	if !ok {
		return fmt.Errorf("stat staged tree %s", staged)
	}
	if err := writeTxn(stage, txn{Op: "install", Name: name, Row: &row, Tree: &id}); err != nil {
		return fmt.Errorf("record install transaction: %w", err)
	}
	target := filepath.Join(pluginsDir, name)
	old := filepath.Join(stage, oldTree)
	var undo func()
	switch {
	case !exists(target):
		if err := os.Rename(staged, target); err != nil {
			return fmt.Errorf("publish %s: %w", name, err)
		}
		undo = func() { _ = os.Rename(target, staged) }
	case exchange(staged, target) == nil:
		// staged now holds the old tree.
		undo = func() { _ = exchange(staged, target) }
	default:
		if err := os.Rename(target, old); err != nil {
			return fmt.Errorf("move the existing %s aside: %w", name, err)
		}
		if err := os.Rename(staged, target); err != nil {
			_ = os.Rename(old, target)
			return fmt.Errorf("publish %s: %w", name, err)
		}
		undo = func() {
			_ = os.Rename(target, staged)
			_ = os.Rename(old, target)
		}
	}
	syncDir(pluginsDir)
	if err := updateRow(metaPath, name, &row); err != nil {
		undo()
		return err
	}
	return nil
}

// copyExamples creates FILE from FILE.example at the plugin's top level when FILE is
// missing (never overwrites).
func copyExamples(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var created []string
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".example") || n == ".example" {
			continue
		}
		real := filepath.Join(dir, strings.TrimSuffix(n, ".example"))
		if exists(real) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		if os.WriteFile(real, data, 0o600) == nil {
			created = append(created, strings.TrimSuffix(n, ".example"))
		}
	}
	sort.Strings(created)
	return created
}

// Installed lists the plugin directories at the top of the plugins directory.
func Installed(pluginsDir string) []string {
	entries, err := os.ReadDir(pluginsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "__") {
			continue
		}
		if e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && isDir(filepath.Join(pluginsDir, e.Name()))) {
			out = append(out, e.Name())
		}
	}
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
