package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// The built-in @ references (upstream agent/context_references.py): @file:path
// (optionally :N or :N-M, a line range), @folder:path, @diff, @staged, @git:N.
// Their text then goes through the same caps as a plugin's (expandContextRefs).
const (
	maxRefFileBytes   = 4 << 20 // a file larger than this is not read at all
	maxFolderEntries  = 200
	maxGitCommits     = 10
	maxGitOutputBytes = 4 << 20
)

// builtinRefNames are the prefixes hermes serves itself (no plugin may claim them).
var builtinRefNames = map[string]bool{"file": true, "folder": true, "diff": true, "staged": true, "git": true}

// bareRefs are the references written without a value.
var bareRefs = map[string]bool{"diff": true, "staged": true}

// sensitiveRefPaths are never attached: credentials the model has no business reading.
var sensitiveRefPaths = []string{".env", ".ssh", ".aws", ".gnupg", ".netrc", ".pgpass", ".npmrc", ".pypirc", "id_rsa", "id_ed25519", "auth.json", ".git-credentials"}

// builtinRefs are the built-in references for the working directory.
func (h *Host) builtinRefs() map[string]*registry.ContextRef {
	r := refRoot{dir: h.f.Cwd, git: h.runGit}
	return map[string]*registry.ContextRef{
		"file":   {Prefix: "file", Description: "a file's text", Expand: r.file},
		"folder": {Prefix: "folder", Description: "a directory's listing", Expand: r.folder},
		"diff":   {Prefix: "diff", Description: "git diff (unstaged changes)", Expand: r.diff},
		"staged": {Prefix: "staged", Description: "git diff --staged", Expand: r.staged},
		"git":    {Prefix: "git", Description: "the last N commits with their patches", Expand: r.log},
	}
}

// refRoot resolves references against the working directory.
type refRoot struct {
	dir string
	git func(ctx context.Context, dir string, args ...string) (string, error)
}

var lineRange = regexp.MustCompile(`^(.+):([0-9]+)(?:-([0-9]+))?$`)

// resolve makes target a path inside the working directory; anything outside
// it, or a credential file, is refused.
func (r refRoot) resolve(target string) (string, error) {
	if r.dir == "" {
		return "", errors.New("no working directory to resolve the path against")
	}
	p := target
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	p = filepath.Clean(p)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no such file or directory %q (paths are relative to %s)", target, r.dir)
		}
		return "", err
	}
	root, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		root = r.dir
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q is outside the working directory %s; only files under it can be attached", target, r.dir)
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		for _, s := range sensitiveRefPaths {
			if strings.EqualFold(part, s) || strings.HasPrefix(strings.ToLower(part), ".env.") {
				return "", fmt.Errorf("%q is a credentials file and is never attached", target)
			}
		}
	}
	return real, nil
}

func (r refRoot) file(_ context.Context, target string) (string, bool, error) {
	from, to := 0, 0
	path, err := r.resolve(target)
	if err != nil {
		m := lineRange.FindStringSubmatch(target)
		if m == nil {
			return "", false, err
		}
		if path, err = r.resolve(m[1]); err != nil {
			return "", false, err
		}
		from, _ = strconv.Atoi(m[2])
		to = from
		if m[3] != "" {
			to, _ = strconv.Atoi(m[3])
		}
		if from < 1 || to < from {
			return "", false, fmt.Errorf("line range %s-%s is empty: write :N or :N-M with 1 <= N <= M", m[2], m[3])
		}
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return "", false, err
	case st.IsDir():
		return "", false, fmt.Errorf("%q is a directory: use @folder:%s", target, target)
	case st.Size() > maxRefFileBytes:
		return "", false, fmt.Errorf("%q is %d bytes, over the %d-byte limit for an attached file: name a line range (@file:%s:N-M)", target, st.Size(), maxRefFileBytes, target)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return "", false, fmt.Errorf("%q is a binary file, not text", target)
	}
	text := string(data)
	if from > 0 {
		lines := strings.SplitAfter(text, "\n")
		if from > len(lines) {
			return "", false, fmt.Errorf("%q has %d lines; line %d is past its end", target, len(lines), from)
		}
		text = strings.Join(lines[from-1:min(to, len(lines))], "")
	}
	return fence(text), true, nil
}

func (r refRoot) folder(_ context.Context, target string) (string, bool, error) {
	path, err := r.resolve(target)
	if err != nil {
		return "", false, err
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return "", false, fmt.Errorf("%q is not a directory: use @file:%s for a file", target, target)
	}
	var lines []string
	more := 0
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == path {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if len(lines) >= maxFolderEntries {
			more++
			return nil
		}
		rel, _ := filepath.Rel(path, p)
		switch {
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			size := int64(0)
			if info, err := d.Info(); err == nil {
				size = info.Size()
			}
			lines = append(lines, fmt.Sprintf("%s (%d bytes)", rel, size))
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	sort.Strings(lines)
	if more > 0 {
		lines = append(lines, fmt.Sprintf("[... %d more entries not listed]", more))
	}
	if len(lines) == 0 {
		return "(empty directory)", true, nil
	}
	return strings.Join(lines, "\n"), true, nil
}

func (r refRoot) diff(ctx context.Context, _ string) (string, bool, error) {
	return r.gitText(ctx, "(no unstaged changes)", "diff")
}

func (r refRoot) staged(ctx context.Context, _ string) (string, bool, error) {
	return r.gitText(ctx, "(nothing staged)", "diff", "--staged")
}

func (r refRoot) log(ctx context.Context, target string) (string, bool, error) {
	n, err := strconv.Atoi(target)
	if err != nil || n < 1 {
		return "", false, fmt.Errorf("%q is not a number of commits: write @git:N with N from 1 to %d", target, maxGitCommits)
	}
	n = min(n, maxGitCommits)
	return r.gitText(ctx, "(no commits)", "log", "-"+strconv.Itoa(n), "-p")
}

func (r refRoot) gitText(ctx context.Context, empty string, args ...string) (string, bool, error) {
	out, err := r.git(ctx, r.dir, args...)
	if err != nil {
		return "", false, err
	}
	if strings.TrimSpace(out) == "" {
		return empty, true, nil
	}
	return fence(out), true, nil
}

// runGit runs git in dir with the installer's hardening (no hooks, no
// fsmonitor, no prompts: the repository may be anyone's) and returns its output.
func (h *Host) runGit(ctx context.Context, dir string, args ...string) (string, error) {
	g := &install.Git{Env: h.f.Env, Reaper: h.f.procs}
	out, err := g.Run(ctx, dir, nil, nil, append([]string{"--no-pager", "-c", "color.ui=never"}, args...)...)
	if err != nil {
		var ge *install.GitError
		if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
			if strings.Contains(strings.ToLower(ge.Stderr), "not a git repository") {
				return "", fmt.Errorf("git %s failed: %s is not inside a git repository", args[0], dir)
			}
			first, _, _ := strings.Cut(strings.TrimSpace(ge.Stderr), "\n")
			return "", fmt.Errorf("git %s failed: %s", args[0], first)
		}
		return "", fmt.Errorf("git %s failed: %w", args[0], err)
	}
	if len(out) > maxGitOutputBytes {
		out = out[:maxGitOutputBytes] + "\n[... git output cut at the size limit]"
	}
	return out, nil
}

// fence puts text in a code fence long enough not to be closed by it.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}
