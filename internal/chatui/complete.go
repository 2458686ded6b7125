package chatui

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// complete is the editor's Tab completion: slash command names (with their
// hints) at the start of the line, and paths after @file:.
func (m *Model) complete(text string, cursor int) ([]editorCompletion, int) {
	cursor = min(max(cursor, 0), len(text))
	before := text[:cursor]
	start := strings.LastIndexAny(before, " \t\n") + 1
	word := before[start:]
	switch {
	case start == 0 && strings.HasPrefix(word, "/"):
		return m.slashCompletions(word), 0
	case strings.HasPrefix(word, "@file:"):
		return pathCompletions(m.o.Cwd, word), start
	}
	return nil, cursor
}

func (m *Model) slashCompletions(word string) []editorCompletion {
	var out []editorCompletion
	add := func(name, args, help string) {
		if strings.HasPrefix("/"+name, strings.ToLower(word)) {
			hint := help
			if args != "" {
				hint = args + " — " + help
			}
			out = append(out, editorCompletion{Text: "/" + name, Hint: hint})
		}
	}
	for _, c := range m.o.Commands {
		add(c.Name, c.Args, c.Help)
	}
	if m.chat != nil {
		for _, c := range m.chat.Commands() {
			add(c.Name, c.ArgsHint, c.Description)
		}
	}
	return out
}

// pathCompletions lists the entries of the directory word names, relative to cwd.
func pathCompletions(cwd, word string) []editorCompletion {
	typed := strings.TrimPrefix(word, "@file:")
	dir, base := filepath.Split(typed)
	read := dir
	if !filepath.IsAbs(read) {
		read = filepath.Join(cwd, read)
	}
	entries, err := os.ReadDir(read)
	if err != nil {
		return nil
	}
	var out []editorCompletion
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		text := "@file:" + dir + name
		hint := "file"
		if e.IsDir() {
			text += "/"
			hint = "directory"
		}
		out = append(out, editorCompletion{Text: text, Hint: hint})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Text < out[j].Text })
	return out
}
