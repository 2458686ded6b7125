package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

const (
	maxLineChars  = 2000     // one line of read_file output (upstream's clamp)
	sniffBytes    = 8 << 10  // bytes looked at to tell text from binary
	maxPatchBytes = 16 << 20 // patch loads the whole file; bigger ones go through the terminal
)

// --- read_file ---------------------------------------------------------------

func (t *toolbox) readFile(ctx context.Context, args map[string]any, _ map[string]any) (string, error) {
	p, err := strArg(args, "path", true)
	if err != nil {
		return badArgs(ReadFile, err)
	}
	offset, err := intArg(args, "offset", 1)
	if err != nil {
		return badArgs(ReadFile, err)
	}
	limit, err := intArg(args, "limit", 500)
	if err != nil {
		return badArgs(ReadFile, err)
	}
	offset = max(offset, 1)
	limit = min(max(limit, 1), 2000)

	abs := t.resolve(p)
	if t.secret(abs) {
		return fail("read_denied", "Refusing to read %s: it holds secrets (API keys) that must not enter the conversation.", p)
	}
	f, st, err := openRegular(abs, p)
	if err != nil {
		return fail("tool_error", "%s", err)
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffBytes)
	if isBinary(head) {
		return fail("binary_file", "Binary file (%s) — cannot display as text: %s", humanSize(st.Size()), p)
	}

	var (
		out       strings.Builder
		total     int
		truncated bool
		nextLine  int
	)
	err = eachLine(ctx, br, func(n int, line []byte, long bool) bool {
		total = n
		if n < offset || n >= offset+limit || truncated {
			return true
		}
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if long || utf8.RuneCountInString(text) > maxLineChars {
			text = string([]rune(text)[:min(maxLineChars, utf8.RuneCountInString(text))]) + "... [truncated]"
		}
		entry := fmt.Sprintf("%d|%s", n, text)
		if out.Len() > 0 && out.Len()+1+len(entry) > MaxReadChars {
			truncated, nextLine = true, n
			return true
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(entry)
		return true
	})
	if err != nil {
		return fail("tool_error", "read %s: %v", p, err)
	}
	res := obj{{"content", out.String()}, {"total_lines", total}, {"file_size", st.Size()}}
	last := min(offset+limit-1, total)
	switch {
	case truncated:
		res = append(res, kv{"truncated", true}, kv{"hint", fmt.Sprintf(
			"Output cut at ~%d characters. Use offset=%d to continue reading.", MaxReadChars, nextLine)})
	case total > 0 && offset > total:
		res = append(res, kv{"truncated", false}, kv{"hint", fmt.Sprintf(
			"offset %d is past the end of the file (%d lines).", offset, total)})
	case last < total:
		res = append(res, kv{"truncated", true}, kv{"hint", fmt.Sprintf(
			"Showing lines %d-%d of %d. Use offset=%d to continue reading.", offset, last, total, last+1)})
	default:
		res = append(res, kv{"truncated", false})
	}
	return encode(res), nil
}

// openRegular opens a regular file, with an error the model can act on otherwise.
func openRegular(abs, shown string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg := "File not found: " + shown
		if s := similarFiles(abs); len(s) > 0 {
			msg += " (similar: " + strings.Join(s, ", ") + ")"
		}
		return nil, nil, errors.New(msg)
	case err != nil:
		return nil, nil, fmt.Errorf("cannot access %s: %w", shown, err)
	case st.IsDir():
		return nil, nil, fmt.Errorf("%s is a directory; use search_files with target='files' to list it", shown)
	case !st.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s is not a regular file (a device, pipe or socket); refusing to read it", shown)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open %s: %w", shown, err)
	}
	return f, st, nil
}

// similarFiles suggests names in the same directory that differ only a little.
func similarFiles(abs string) []string {
	dir, base := filepath.Split(abs)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	want := strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	var out []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if want != "" && (stem == want || strings.Contains(name, want) || (len(stem) > 2 && strings.Contains(want, stem))) {
			out = append(out, filepath.Join(dir, e.Name()))
			if len(out) == 5 {
				break
			}
		}
	}
	return out
}

// eachLine calls fn for every line (1-based), without holding more than maxLineChars
// worth of one line in memory; long reports that the line was longer.
func eachLine(ctx context.Context, br *bufio.Reader, fn func(n int, line []byte, long bool) bool) error {
	n := 0
	var cur []byte
	long := false
	limit := maxLineChars * 4 // bytes: up to 4 per rune
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if len(cur) < limit {
				room := limit - len(cur)
				cur = append(cur, chunk[:min(room, len(chunk))]...)
				if len(chunk) > room {
					long = true
				}
			} else {
				long = true
			}
		}
		switch {
		case err == nil:
			n++
			if n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if !fn(n, bytes.TrimRight(cur, "\r\n"), long) {
				return nil
			}
			cur, long = cur[:0], false
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(cur) > 0 || long {
				n++
				fn(n, bytes.TrimRight(cur, "\r\n"), long)
			}
			return nil
		default:
			return err
		}
	}
}

// isBinary: a NUL byte, or bytes that are not UTF-8 (a sequence cut at the end of
// the sample does not count).
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return len(b) > 3 || utf8.FullRune(b)
		}
		b = b[size:]
	}
	return false
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// --- write_file --------------------------------------------------------------

func (t *toolbox) writeFile(_ context.Context, args map[string]any, _ map[string]any) (string, error) {
	p, err := strArg(args, "path", true)
	if err == nil && p == "" {
		err = argError(`argument "path" is empty`)
	}
	if err != nil {
		return badArgs(WriteFile, err)
	}
	if _, ok := args["content"]; !ok {
		return badArgs(WriteFile, argError(`missing required argument "content": re-send the call with both path and content`))
	}
	content, err := strArg(args, "content", false)
	if err != nil {
		return badArgs(WriteFile, err)
	}
	abs := realPath(t.resolve(p))
	if why := t.writeDenied(abs); why != "" {
		return fail("write_denied", "Refusing to write %s: %s. If this change is really wanted, the user can make it, or run it through the terminal tool, which asks for approval.", p, why)
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return fail("tool_error", "%s is a directory; give a file path", p)
	}
	created, err := mkdirs(filepath.Dir(abs))
	if err != nil {
		return fail("tool_error", "create directories for %s: %v", p, err)
	}
	if err := writeAtomic(abs, []byte(content)); err != nil {
		return fail("tool_error", "write %s: %v", p, err)
	}
	return encode(obj{{"bytes_written", len(content)}, {"dirs_created", created}}), nil
}

// realPath follows symlinks, dangling ones and those of missing parents included, so
// a write lands where the links point and the protected-path check sees that place.
func realPath(p string) string { return resolveLinks(p, 0) }

func resolveLinks(p string, depth int) string {
	if depth > 40 {
		return p
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return resolveLinks(filepath.Clean(target), depth+1)
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(resolveLinks(parent, depth+1), filepath.Base(p))
}

// mkdirs creates dir and its parents, reporting whether anything was created.
func mkdirs(dir string) (bool, error) {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return false, fmt.Errorf("%s is not a directory", dir)
		}
		return false, nil
	}
	return true, os.MkdirAll(dir, 0o755)
}

// writeAtomic replaces path through a temporary file in the same directory, keeping
// the mode of an existing file, so a crash never leaves half a file.
func writeAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".hermes-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, path)
}

// --- patch -------------------------------------------------------------------

func (t *toolbox) patch(_ context.Context, args map[string]any, _ map[string]any) (string, error) {
	mode, err := strArg(args, "mode", false)
	if err != nil {
		return badArgs(Patch, err)
	}
	if mode != "" && mode != "replace" {
		return fail("invalid_arguments", "patch: mode=%q is not supported by this host; use mode='replace' with path, old_string and new_string (one edit per call)", mode)
	}
	p, err := strArg(args, "path", true)
	if err != nil {
		return badArgs(Patch, err)
	}
	oldS, err := strArg(args, "old_string", true)
	if err != nil {
		return badArgs(Patch, err)
	}
	newS, err := strArg(args, "new_string", true)
	if err != nil {
		return badArgs(Patch, err)
	}
	all, err := boolArg(args, "replace_all")
	if err != nil {
		return badArgs(Patch, err)
	}
	if oldS == "" {
		return fail("invalid_arguments", "patch: old_string is empty; give the exact text to replace (use write_file to create a file)")
	}
	if oldS == newS {
		return fail("invalid_arguments", "patch: old_string and new_string are identical; nothing to change")
	}
	abs := realPath(t.resolve(p))
	if why := t.writeDenied(abs); why != "" {
		return fail("write_denied", "Refusing to edit %s: %s.", p, why)
	}
	f, st, err := openRegular(abs, p)
	if err != nil {
		return fail("tool_error", "%s", err)
	}
	if st.Size() > maxPatchBytes {
		f.Close()
		return fail("tool_error", "%s is %s, too big to patch in memory (limit %s); edit it with the terminal", p, humanSize(st.Size()), humanSize(maxPatchBytes))
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fail("tool_error", "read %s: %v", p, err)
	}
	if isBinary(data[:min(len(data), sniffBytes)]) {
		return fail("binary_file", "%s is a binary file; patch edits text only", p)
	}
	text := string(data)
	n := strings.Count(text, oldS)
	if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(oldS, "\r\n") {
		// The model writes \n; a CRLF file keeps its line endings.
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		if c := strings.Count(text, crlf(oldS)); c > 0 {
			oldS, newS, n = crlf(oldS), crlf(newS), c
		}
	}
	switch {
	case n == 0:
		return fail("no_match", "Could not find old_string in %s. No changes made. It must match the file exactly, whitespace and indentation included: use read_file to see the current content, or search_files to locate the text.", p)
	case n > 1 && !all:
		return fail("ambiguous_match", "old_string matches %d times in %s; it must match exactly once. Add surrounding lines to old_string to make it unique, or set replace_all=true to replace every occurrence. No changes made.", n, p)
	}
	var updated string
	if all {
		updated = strings.ReplaceAll(text, oldS, newS)
	} else {
		updated = strings.Replace(text, oldS, newS, 1)
	}
	if err := writeAtomic(abs, []byte(updated)); err != nil {
		return fail("tool_error", "write %s: %v", p, err)
	}
	res := obj{{"success", true}, {"diff", unifiedDiff(p, text, updated)}, {"files_modified", []string{p}}}
	if all {
		res = append(res, kv{"replacements", n})
	}
	return encode(res), nil
}

// unifiedDiff shows the changed region of a file (everything between the first and
// the last differing line) with three lines of context.
func unifiedDiff(name, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	const ctxLines = 3
	start := max(0, pre-ctxLines)
	endA := min(len(al), len(al)-suf+ctxLines)
	endB := min(len(bl), len(bl)-suf+ctxLines)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(start, endA-start), hunkRange(start, endB-start))
	for _, l := range al[start:pre] {
		sb.WriteString(" " + l + "\n")
	}
	for _, l := range al[pre : len(al)-suf] {
		sb.WriteString("-" + l + "\n")
	}
	for _, l := range bl[pre : len(bl)-suf] {
		sb.WriteString("+" + l + "\n")
	}
	for _, l := range al[len(al)-suf : endA] {
		sb.WriteString(" " + l + "\n")
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
