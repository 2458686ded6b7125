package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

const (
	maxSearchLimit     = 1000     // results one call returns
	maxScannedFiles    = 50_000   // files one search looks at
	maxSearchFileBytes = 10 << 20 // bigger files are not searched inside
	maxMatchChars      = 500      // one matching line as shown
)

// skipDirs are never descended into: version control, dependency and cache trees.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, ".hg": true, ".svn": true, "__pycache__": true,
	".venv": true, ".mypy_cache": true, ".pytest_cache": true, ".tox": true,
}

type match struct {
	path    string
	line    int
	content string
}

func (t *toolbox) searchFiles(ctx context.Context, args map[string]any, _ map[string]any) (string, error) {
	pattern, err := strArg(args, "pattern", true)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	target, err := strArg(args, "target", false)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	switch target {
	case "", "grep":
		target = "content"
	case "find":
		target = "files"
	case "content", "files":
	default:
		return fail("invalid_arguments", "search_files: target must be 'content' or 'files', got %q", target)
	}
	root, err := strArg(args, "path", false)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	if root == "" {
		root = "."
	}
	glob, err := strArg(args, "file_glob", false)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	limit, err := intArg(args, "limit", 50)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	offset, err := intArg(args, "offset", 0)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	limit, offset = min(max(limit, 1), maxSearchLimit), max(offset, 0)
	mode, err := strArg(args, "output_mode", false)
	if err != nil {
		return badArgs(SearchFiles, err)
	}
	switch mode {
	case "":
		mode = "content"
	case "content", "files_only", "count":
	default:
		return fail("invalid_arguments", "search_files: output_mode must be 'content', 'files_only' or 'count', got %q", mode)
	}
	if glob != "" {
		if _, err := filepath.Match(glob, "x"); err != nil {
			return fail("invalid_arguments", "search_files: file_glob %q is not a valid glob: %v", glob, err)
		}
	}

	abs := t.resolve(root)
	st, err := os.Stat(abs)
	if err != nil {
		return fail("tool_error", "search_files: path %s does not exist or cannot be read: %v", root, err)
	}
	show := func(p string) string {
		rel, err := filepath.Rel(abs, p)
		if err != nil || !st.IsDir() {
			return root
		}
		return filepath.Join(root, rel)
	}

	if target == "files" {
		if _, err := filepath.Match(pattern, "x"); err != nil {
			return fail("invalid_arguments", "search_files: %q is not a valid glob for target='files': %v", pattern, err)
		}
		return t.findFiles(ctx, abs, pattern, glob, limit, offset, show)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fail("invalid_arguments", "search_files: invalid regex %q: %v (Go RE2 syntax: no look-around or backreferences; escape literal characters such as ( [ { with a backslash)", pattern, err)
	}

	var (
		matches   []match
		total     int
		files     []string
		counts    = map[string]int{}
		reason    string
		scanned   int
		truncated bool
	)
	err = walk(ctx, abs, func(p string, d fs.DirEntry) error {
		if glob != "" && !globMatches(glob, p, abs) {
			return nil
		}
		scanned++
		if scanned > maxScannedFiles {
			reason = fmt.Sprintf("stopped after scanning %d files; narrow path or file_glob", maxScannedFiles)
			return errStop
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxSearchFileBytes || t.secret(p) {
			return nil
		}
		n, err := grepFile(p, re, func(line int, text string) {
			total++
			if mode == "content" && total > offset && len(matches) < limit {
				matches = append(matches, match{show(p), line, clip(text)})
			}
		})
		if err != nil || n == 0 {
			return nil
		}
		files = append(files, show(p))
		counts[show(p)] = n
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return fail("tool_error", "search_files: %v", err)
	}
	res := obj{}
	switch mode {
	case "content":
		res = append(res, kv{"total_count", total})
		if len(matches) > 0 {
			out := make([]obj, len(matches))
			for i, m := range matches {
				out[i] = obj{{"path", m.path}, {"line", m.line}, {"content", m.content}}
			}
			res = append(res, kv{"matches", out})
		}
		truncated = total > offset+len(matches)
	case "files_only":
		res = append(res, kv{"total_count", len(files)})
		page := window(files, offset, limit)
		if len(page) > 0 {
			res = append(res, kv{"files", page})
		}
		truncated = len(files) > offset+len(page)
	case "count":
		res = append(res, kv{"total_count", total})
		page := window(files, offset, limit)
		pc := map[string]int{}
		for _, f := range page {
			pc[f] = counts[f]
		}
		if len(pc) > 0 {
			res = append(res, kv{"counts", pc})
		}
		truncated = len(files) > offset+len(page)
	}
	if truncated || reason != "" {
		res = append(res, kv{"truncated", true})
	}
	if reason != "" {
		res = append(res, kv{"limit_reason", reason})
	} else if truncated {
		res = append(res, kv{"hint", fmt.Sprintf("Results truncated. Use offset=%d to see more, or narrow with a more specific pattern or file_glob.", offset+limit)})
	}
	return encode(res), nil
}

func (t *toolbox) findFiles(ctx context.Context, abs, pattern, glob string, limit, offset int, show func(string) string) (string, error) {
	type found struct {
		path  string
		mtime time.Time
	}
	var all []found
	reason := ""
	err := walk(ctx, abs, func(p string, d fs.DirEntry) error {
		if len(all) >= maxScannedFiles {
			reason = fmt.Sprintf("stopped after %d files; narrow path or pattern", maxScannedFiles)
			return errStop
		}
		if !globMatches(pattern, p, abs) || (glob != "" && !globMatches(glob, p, abs)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		all = append(all, found{show(p), info.ModTime()})
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return fail("tool_error", "search_files: %v", err)
	}
	// Newest first, as upstream: what was just edited is usually what is wanted.
	sort.SliceStable(all, func(i, j int) bool { return all[i].mtime.After(all[j].mtime) })
	names := make([]string, len(all))
	for i, f := range all {
		names[i] = f.path
	}
	page := window(names, offset, limit)
	res := obj{{"total_count", len(all)}}
	if len(page) > 0 {
		res = append(res, kv{"files", page})
	}
	if len(all) > offset+len(page) || reason != "" {
		res = append(res, kv{"truncated", true})
	}
	if reason != "" {
		res = append(res, kv{"limit_reason", reason})
	}
	return encode(res), nil
}

var errStop = errors.New("stop")

// walk visits the regular files under root (or root itself when it is a file),
// skipping version-control and dependency directories, in lexical order.
func walk(ctx context.Context, root string, fn func(p string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entries are skipped, not fatal
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return fn(p, d)
	})
}

// globMatches matches a glob against the file name, or against the path relative to
// root when the glob has a slash in it.
func globMatches(glob, p, root string) bool {
	if strings.Contains(glob, "/") {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return false
		}
		ok, _ := filepath.Match(glob, filepath.ToSlash(rel))
		return ok
	}
	ok, _ := filepath.Match(glob, filepath.Base(p))
	return ok
}

// grepFile calls fn for each matching line of a text file; binary files are skipped.
func grepFile(p string, re *regexp.Regexp, fn func(line int, text string)) (int, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffBytes)
	if isBinary(head) {
		return 0, nil
	}
	n := 0
	err = eachLine(context.Background(), br, func(line int, text []byte, _ bool) bool {
		if re.Match(text) {
			n++
			fn(line, string(text))
		}
		return true
	})
	return n, err
}

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > maxMatchChars {
		return string(r[:maxMatchChars]) + "... [truncated]"
	}
	return s
}

func window(s []string, offset, limit int) []string {
	if offset >= len(s) {
		return nil
	}
	return s[offset:min(len(s), offset+limit)]
}
