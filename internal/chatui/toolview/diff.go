package toolview

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/hermes-go/hermes/internal/termsafe"
)

const (
	diffContext  = 3   // unchanged lines around a change
	diffMaxLines = 200 // lines shown before "… N more lines"
	diffMaxBytes = 1 << 20
)

// Diff is what a write_file or patch call will change, as a unified diff,
// computed when the call starts (before the tool writes): readFile reads the
// file as it is now, given the path as the model sent it (the caller resolves
// it as the tool does, against the tool's working directory); an error that
// is fs.ErrNotExist makes it a new file, every line added. It is
// coloured (+ green, - red, @@ cyan) only with color, each line cut to width,
// and capped at 200 lines. ok is false for other tools, and for a call the
// tool will refuse (bad arguments, a patch whose old_string does not match
// exactly once, a mode other than replace), whose error tells the story.
func Diff(name, args string, readFile func(path string) ([]byte, error), width int, color bool) (diff string, ok bool) {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil || a == nil {
		return "", false
	}
	path, ok := a["path"].(string)
	if !ok || path == "" {
		return "", false
	}
	var before, after string
	isNew := false
	switch name {
	case toolWriteFile:
		content, ok := a["content"].(string)
		if !ok {
			return "", false
		}
		data, err := readFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			isNew = true
		case err != nil:
			return "", false
		}
		before, after = string(data), content
	case toolPatch:
		data, err := readFile(path)
		if err != nil {
			return "", false
		}
		before = string(data)
		if after, ok = patched(before, a); !ok {
			return "", false
		}
	default:
		return "", false
	}
	return renderDiff(path, before, after, isNew, width, color), true
}

// FileReader reads a file the way the built-in file tools find it: "~/" is
// under home, a relative path under workDir. It is Diff's readFile for the
// chat.
func FileReader(workDir, home string) func(path string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if p == "~" || strings.HasPrefix(p, "~/") {
			p = filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		return os.ReadFile(filepath.Clean(p))
	}
}

// patched is text after the patch tool's replace mode, as the tool does it
// (internal/tools/builtin/files.go): old_string must match exactly once unless
// replace_all, and a CRLF file is matched with the model's LF text made CRLF.
func patched(text string, a map[string]any) (string, bool) {
	if mode, _ := a["mode"].(string); mode != "" && mode != "replace" {
		return "", false
	}
	oldS, ok1 := a["old_string"].(string)
	newS, ok2 := a["new_string"].(string)
	if !ok1 || !ok2 || oldS == "" || oldS == newS {
		return "", false
	}
	all := false
	switch v := a["replace_all"].(type) {
	case bool:
		all = v
	case string:
		all = strings.EqualFold(v, "true")
	}
	n := strings.Count(text, oldS)
	if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(oldS, "\r\n") {
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		if c := strings.Count(text, crlf(oldS)); c > 0 {
			oldS, newS, n = crlf(oldS), crlf(newS), c
		}
	}
	switch {
	case n == 0, n > 1 && !all:
		return "", false
	case all:
		return strings.ReplaceAll(text, oldS, newS), true
	}
	return strings.Replace(text, oldS, newS, 1), true
}

// renderDiff draws the unified diff of before → after.
func renderDiff(path, before, after string, isNew bool, width int, color bool) string {
	st := newStyles(color)
	shown := termsafe.Line(path)
	from := "a/" + shown
	if isNew {
		from = "/dev/null"
	}
	if before == after {
		return render(st.dim, color, fit("no changes to "+shown, width))
	}
	if strings.IndexByte(before, 0) >= 0 || strings.IndexByte(after, 0) >= 0 {
		return render(st.dim, color, fit(fmt.Sprintf("%s: binary, %s → %s", shown, humanSize(len(before)), humanSize(len(after))), width))
	}
	if len(before) > diffMaxBytes || len(after) > diffMaxBytes {
		// Diffing megabytes would stall the screen for a diff nobody reads.
		return render(st.dim, color, fit(fmt.Sprintf("%s: %s → %s (too big to diff)", shown, humanSize(len(before)), humanSize(len(after))), width))
	}
	u, err := udiff.ToUnifiedDiff(from, "b/"+shown, before, udiff.Lines(before, after), diffContext)
	if err != nil { // cannot happen: the edits come from the same texts
		return render(st.fail, color, fit("cannot show the diff: "+err.Error(), width))
	}
	lines := []string{
		render(st.file, color, fit("--- "+from, width)),
		render(st.file, color, fit("+++ b/"+shown, width)),
	}
	total := 2
	for _, h := range u.Hunks {
		total += 1 + len(h.Lines)
		for _, l := range h.Lines {
			if !strings.HasSuffix(l.Content, "\n") {
				total++
			}
		}
	}
	add := func(s string) bool {
		if len(lines) >= diffMaxLines {
			return false
		}
		lines = append(lines, s)
		return true
	}
	for _, h := range u.Hunks {
		if !add(render(st.hunk, color, fit(hunkHeader(h), width))) {
			break
		}
		full := true
		for _, l := range h.Lines {
			mark, style := " ", st.choice
			switch l.Kind {
			case udiff.Insert:
				mark, style = "+", st.add
			case udiff.Delete:
				mark, style = "-", st.del
			}
			text := strings.TrimSuffix(strings.TrimSuffix(l.Content, "\n"), "\r")
			text = fit(mark+termsafe.Line(expandTabs(text)), width)
			if l.Kind == udiff.Equal {
				text = render(st.dim, color, text)
			} else {
				text = render(style, color, text)
			}
			if !add(text) || (!strings.HasSuffix(l.Content, "\n") && !add(render(st.dim, color, fit(`\ No newline at end of file`, width)))) {
				full = false
				break
			}
		}
		if !full {
			break
		}
	}
	if rest := total - len(lines); rest > 0 {
		lines = append(lines, render(st.dim, color, fmt.Sprintf("… %d more lines", rest)))
	}
	return strings.Join(lines, "\n")
}

// hunkHeader is "@@ -from,count +to,count @@" for h.
func hunkHeader(h *udiff.Hunk) string {
	var del, ins int
	for _, l := range h.Lines {
		switch l.Kind {
		case udiff.Delete:
			del++
		case udiff.Insert:
			ins++
		default:
			del++
			ins++
		}
	}
	return "@@ -" + hunkRange(h.FromLine, del) + " +" + hunkRange(h.ToLine, ins) + " @@"
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return strconv.Itoa(max(start-1, 0)) + ",0"
	case 1:
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}
