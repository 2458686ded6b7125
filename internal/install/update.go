package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// AutostashMessage names the stash an update makes of local edits.
const AutostashMessage = "hermes-plugin-update-autostash"

// UpdateRequest is one update.
type UpdateRequest struct {
	Name         string
	ScanDisabled bool
}

// UpdateResult is what an update did.
type UpdateResult struct {
	Name      string
	Dir       string
	Before    string
	After     string
	UpToDate  bool
	Manifest  *manifest.Manifest
	Scan      *ScanReport
	Notes     []string // autostash outcome and the like
	Created   []string
	GitOutput string
}

// NotInstalledError names a plugin that is not in the plugins directory.
type NotInstalledError struct {
	Name, Dir string
	Installed []string
}

func (e *NotInstalledError) Error() string {
	list := "(none)"
	if len(e.Installed) > 0 {
		list = strings.Join(e.Installed, ", ")
	}
	return fmt.Sprintf("Plugin '%s' not found in %s.\nInstalled plugins: %s", e.Name, e.Dir, list)
}

func (in *Installer) notInstalled(name string) error {
	return &NotInstalledError{Name: name, Dir: in.PluginsDir, Installed: Installed(in.PluginsDir)}
}

// CheckInstalled reports a *NotInstalledError when no plugin folder has this name,
// so a caller can say so before it announces an update. Update checks again
// under the lock.
func (in *Installer) CheckInstalled(name string) error {
	if !safeName(name) || !isDir(filepath.Join(in.PluginsDir, name)) {
		return in.notInstalled(name)
	}
	return nil
}

// Update pulls a git-installed plugin fast-forward on its branch. Local edits are
// stashed first and re-applied afterwards; on conflict they stay in the stash. The
// updated tree is rescanned; the caller acts on the verdict (dangerous → disable).
// When ctx is cancelled (Ctrl-C) the error is an *InterruptedError and the checkout
// is as it was.
func (in *Installer) Update(ctx context.Context, req UpdateRequest) (*UpdateResult, error) {
	pulled := false
	res, err := in.update(ctx, req, &pulled)
	if !pulled {
		err = interrupted(ctx, err, "the plugin was not updated.")
	}
	return res, err
}

func (in *Installer) update(ctx context.Context, req UpdateRequest, pulled *bool) (*UpdateResult, error) {
	if !safeName(req.Name) {
		return nil, in.notInstalled(req.Name)
	}
	unlock, err := in.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	dir := filepath.Join(in.PluginsDir, req.Name)
	if !isDir(dir) {
		return nil, in.notInstalled(req.Name)
	}
	md, err := ReadMetadata(in.metaPath())
	if err != nil {
		return nil, err
	}
	row, hasRow := md.Rows[req.Name]
	if hasRow && row.Pinned {
		src := row.Source
		if src == "" {
			src = "<source>"
		}
		return nil, userErr("Plugin '%s' is pinned to %s. To move it, run `hermes plugins install %s --force --ref <40-character commit SHA>`.", req.Name, row.Revision, src)
	}
	if !exists(filepath.Join(dir, ".git")) {
		hint := ""
		if hasRow && row.Source != "" {
			hint = fmt.Sprintf(" Reinstall it with `hermes plugins install %s --force`.", row.Source)
		}
		return nil, userErr("Plugin '%s' was not installed from git (no .git directory). Cannot update.%s", req.Name, hint)
	}
	g := in.Git
	res := &UpdateResult{Name: req.Name, Dir: dir}
	if res.Before, err = g.Run(ctx, dir, nil, nil, "rev-parse", "HEAD"); err != nil {
		return nil, userErr("Cannot read the plugin's git checkout: %s", gitMessage(err))
	}
	if b, err := g.Run(ctx, dir, nil, nil, "symbolic-ref", "-q", "HEAD"); err != nil || b == "" {
		return nil, userErr("Plugin '%s' is checked out at a detached commit %s, not a branch, so there is nothing to pull. Reinstall with `hermes plugins install <source> --force [--ref SHA]`.", req.Name, res.Before)
	}

	stashed, err := in.autostash(ctx, dir)
	if err != nil {
		return nil, err
	}
	originURL, _ := g.Run(ctx, dir, nil, nil, "remote", "get-url", "origin")
	var out string
	pullErr := in.Credentials.withCredentials(ctx, originURL, nil, func(env, secrets []string) error {
		var err error
		out, err = g.RunNet(ctx, dir, env, secrets, "pull", "--ff-only", "--no-recurse-submodules", "--no-rebase", "--quiet")
		return err
	})
	res.GitOutput = out
	if pullErr != nil && ctx.Err() != nil {
		return nil, in.interruptedUpdate(ctx, dir, res.Before, stashed)
	}
	if pullErr != nil {
		msg := "git pull --ff-only failed:\n" + gitMessage(pullErr)
		if stashed {
			msg += "\n" + in.reapply(ctx, dir, true)
		}
		return nil, &Error{Msg: msg}
	}
	// Past the pull the update finishes even if interrupted now: what is left is
	// local and quick, and stopping would leave a new checkout unrecorded and
	// unscanned (a second Ctrl-C still ends hermes at once).
	*pulled = true
	ctx = context.WithoutCancel(ctx)
	if stashed {
		res.Notes = append(res.Notes, in.reapply(ctx, dir, false))
	}
	if res.After, err = g.Run(ctx, dir, nil, nil, "rev-parse", "HEAD"); err != nil {
		return nil, userErr("Cannot read the updated revision: %s", gitMessage(err))
	}
	res.After = strings.ToLower(res.After)
	res.UpToDate = res.After == strings.ToLower(res.Before)
	if hasRow {
		row.Revision = res.After
		md.Set(req.Name, row)
		if err := WriteMetadata(in.metaPath(), md); err != nil {
			return nil, err
		}
	}
	removePycache(dir)
	res.Created = copyExamples(dir)
	m, warns, err := manifest.LoadDir(dir)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("Warning: the updated plugin.yaml cannot be read: %v", err))
	} else {
		res.Manifest = m
		res.Notes = append(res.Notes, warns...)
	}
	if !req.ScanDisabled {
		if in.Scanner == nil {
			in.logf("Note: security scan skipped (no scanner in this build).")
		} else {
			var env []string
			if m != nil {
				for _, e := range m.RequiresEnv {
					env = append(env, e.Name)
				}
			}
			src := ScrubURL(originURL)
			if hasRow {
				src = row.Source
			}
			rep, err := in.Scanner.Scan(ctx, dir, ScanTarget{Name: req.Name, RequiresEnv: env, Source: src})
			if err != nil {
				return res, fmt.Errorf("security scan of the updated plugin: %w", err)
			}
			res.Scan = rep
		}
	}
	return res, nil
}

// autostash stashes local edits (tracked and untracked) under AutostashMessage.
// It reports whether a stash was made; if edits exist but cannot be stashed, the
// update is aborted before the checkout is touched.
func (in *Installer) autostash(ctx context.Context, dir string) (bool, error) {
	g := in.Git
	status, err := g.Run(ctx, dir, nil, nil, "status", "--porcelain", "--ignore-submodules")
	if err != nil {
		return false, userErr("git status failed: %s", gitMessage(err))
	}
	if strings.TrimSpace(status) == "" {
		return false, nil
	}
	before, _ := g.Run(ctx, dir, nil, nil, "rev-parse", "-q", "--verify", "refs/stash")
	_, pushErr := g.Run(ctx, dir, nil, nil, "-c", "user.name=hermes", "-c", "user.email=hermes@localhost",
		"stash", "push", "--include-untracked", "-m", AutostashMessage)
	after, _ := g.Run(ctx, dir, nil, nil, "rev-parse", "-q", "--verify", "refs/stash")
	if after == "" || after == before {
		msg := "Local changes in the plugin checkout could not be stashed; update aborted before touching the checkout."
		if pushErr != nil {
			msg += "\n" + gitMessage(pushErr)
		}
		return false, &Error{Msg: msg}
	}
	if pushErr != nil {
		_, _ = g.Run(ctx, dir, nil, nil, "reset", "--hard", "--quiet", "HEAD")
	}
	return true, nil
}

// reapply puts stashed edits back after a pull (or after a failed pull) and says
// what happened; on conflict the edits stay in the stash.
func (in *Installer) reapply(ctx context.Context, dir string, pullFailed bool) string {
	g := in.Git
	_, err := g.Run(ctx, dir, nil, nil, "stash", "apply", "--quiet", "stash@{0}")
	conflicts, _ := g.Run(ctx, dir, nil, nil, "diff", "--name-only", "--diff-filter=U")
	if err == nil && strings.TrimSpace(conflicts) == "" {
		_, _ = g.Run(ctx, dir, nil, nil, "stash", "drop", "--quiet", "stash@{0}")
		if pullFailed {
			return "Local changes were restored."
		}
		return "Local changes were re-applied on top of the update."
	}
	_, _ = g.Run(ctx, dir, nil, nil, "reset", "--hard", "--quiet", "HEAD")
	// Untracked files the failed apply wrote would block a later `git stash pop`.
	_, _ = g.Run(ctx, dir, nil, nil, "clean", "-fdq")
	if pullFailed {
		return "Local changes were preserved in git stash (restore with: git stash pop)."
	}
	return fmt.Sprintf("⚠ Local changes in this plugin conflicted with the update and were NOT re-applied. They are preserved in git stash — inspect with `git stash show -p stash@{0}` and re-apply with `git stash pop` inside %s.", dir)
}

func removePycache(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// Remove deletes a plugin's folder and its metadata row together: the folder is
// moved into a staging folder, the row is dropped, then the staging is deleted. An
// interrupted remove is finished by the next run.
func (in *Installer) Remove(ctx context.Context, name string) error {
	if !safeName(name) {
		return in.notInstalled(name)
	}
	unlock, err := in.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	target := filepath.Join(in.PluginsDir, name)
	if !exists(target) {
		return in.notInstalled(name)
	}
	md, err := ReadMetadata(in.metaPath())
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp(in.PluginsDir, removePrefix)
	if err != nil {
		return fmt.Errorf("create staging folder: %w", err)
	}
	if err := writeTxn(stage, txn{Op: "remove", Name: name}); err != nil {
		_ = os.RemoveAll(stage)
		return fmt.Errorf("record remove transaction: %w", err)
	}
	if err := os.Rename(target, filepath.Join(stage, stagedTree)); err != nil {
		_ = os.RemoveAll(stage)
		return fmt.Errorf("remove %s: %w", name, err)
	}
	syncDir(in.PluginsDir)
	_, hasRow := md.Rows[name]
	if hasRow || containsStr(md.BadRows(), name) {
		md.Delete(name)
		if err := WriteMetadata(in.metaPath(), md); err != nil {
			if rerr := os.Rename(filepath.Join(stage, stagedTree), target); rerr != nil {
				return fmt.Errorf("%w; the plugin folder is at %s: move it back to %s", err, filepath.Join(stage, stagedTree), target)
			}
			_ = os.RemoveAll(stage)
			return err
		}
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("delete %s: %w", stage, err)
	}
	return nil
}

// RepairMetadata moves a corrupt .install-metadata.json aside and rebuilds it from
// the installed git checkouts: source from origin, revision from HEAD, pinned when
// HEAD is detached (pinned installs are detached checkouts). It returns the backup
// path ("" when the file was readable and nothing was done), the rebuilt names and
// the installed plugins it could not rebuild (no git checkout: subdirectory installs
// and hand-made folders), which the caller must report.
func (in *Installer) RepairMetadata(ctx context.Context) (backup string, rebuilt, skipped []string, err error) {
	unlock, err := lockPlugins(ctx, in.PluginsDir, nil)
	if err != nil {
		return "", nil, nil, err
	}
	defer unlock()
	path := in.metaPath()
	_, rerr := ReadMetadata(path)
	var ce *CorruptMetadataError
	if !errors.As(rerr, &ce) {
		return "", nil, nil, rerr
	}
	backup = fmt.Sprintf("%s.corrupt-%d", path, os.Getpid())
	for i := 1; exists(backup); i++ {
		backup = fmt.Sprintf("%s.corrupt-%d-%d", path, os.Getpid(), i)
	}
	md := &Metadata{Rows: map[string]Row{}}
	var names []string
	for _, name := range Installed(in.PluginsDir) {
		dir := filepath.Join(in.PluginsDir, name)
		if !exists(filepath.Join(dir, ".git")) {
			skipped = append(skipped, name)
			continue
		}
		head, err := in.Git.Run(ctx, dir, nil, nil, "rev-parse", "HEAD")
		if err != nil {
			skipped = append(skipped, name)
			continue
		}
		origin, _ := in.Git.Run(ctx, dir, nil, nil, "remote", "get-url", "origin")
		_, symErr := in.Git.Run(ctx, dir, nil, nil, "symbolic-ref", "-q", "HEAD")
		md.Rows[name] = Row{Pinned: symErr != nil, Revision: strings.ToLower(head), Source: ScrubURL(origin)}
		names = append(names, name)
	}
	sort.Strings(names)
	if err := os.Rename(path, backup); err != nil {
		return "", nil, nil, fmt.Errorf("move the corrupt metadata aside: %w", err)
	}
	if err := WriteMetadata(path, md); err != nil {
		return backup, nil, nil, err
	}
	return backup, names, skipped, nil
}
