package editor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// menuRows is how many candidates the menu shows at once.
const menuRows = 6

// menuState is the completion menu. Moving through it puts the candidate in
// the text at once, so what is shown is what Enter (or any other key) keeps.
type menuState struct {
	open    bool
	wasOpen bool // the key that closed it may have typed: offer the menu again
	items   []Completion
	sel     int    // -1: none chosen yet
	start   int    // byte offset of the word
	orig    string // the word as typed, which Esc restores
	cur     string // the word as it is in the text now, ending at the cursor
}

func (m *Model) closeMenu() { m.menu = menuState{} }

// candidates asks the completer about the word before the cursor, clamping
// its start to the cursor's line.
func (m Model) candidates() (items []Completion, text string, start, cur int) {
	if m.o.Complete == nil {
		return nil, "", 0, 0
	}
	text, cur = m.ta.Value(), m.cursorOffset()
	items, start = m.o.Complete(text, cur)
	if start < 0 || start > cur {
		return nil, "", 0, 0
	}
	start = max(start, strings.LastIndexByte(text[:cur], '\n')+1)
	return items, text, start, cur
}

// complete is Tab: one candidate completes, several insert what they share
// and open the menu.
func (m *Model) complete() {
	items, text, start, cur := m.candidates()
	word := ""
	if len(items) > 0 {
		word = text[start:cur]
	}
	switch len(items) {
	case 0:
		return
	case 1:
		m.setText(text[:start]+items[0].Text+text[cur:], start+len(items[0].Text))
		return
	}
	now := word
	if p := commonPrefix(items); len(p) > len(word) && strings.HasPrefix(p, word) {
		m.setText(text[:start]+p+text[cur:], start+len(p))
		now = p
	}
	m.menu = menuState{open: true, items: items, sel: -1, start: start, orig: word, cur: now}
}

// refreshMenu reopens the menu on what the word is now, if it still has
// several candidates.
func (m *Model) refreshMenu() {
	items, text, start, cur := m.candidates()
	if len(items) < 2 {
		return
	}
	w := text[start:cur]
	m.menu = menuState{open: true, items: items, sel: -1, start: start, orig: w, cur: w}
}

// menuKey handles a key while the menu is open and reports whether it is done
// with it; other keys close the menu and do their usual job.
func (m *Model) menuKey(ks string) bool {
	n := len(m.menu.items)
	switch ks {
	case "tab", "down", "ctrl+n":
		m.choose((m.menu.sel + 1) % n)
		return true
	case "shift+tab", "up", "ctrl+p":
		if m.menu.sel <= 0 {
			m.choose(n - 1)
		} else {
			m.choose(m.menu.sel - 1)
		}
		return true
	case "enter":
		if m.menu.sel < 0 {
			m.choose(0)
		}
		m.closeMenu()
		return true
	case "esc", "ctrl+g":
		m.replaceWord(m.menu.orig)
		m.closeMenu()
		return true
	}
	m.closeMenu()
	m.menu.wasOpen = true
	return false
}

func (m *Model) choose(i int) {
	m.menu.sel = i
	m.replaceWord(m.menu.items[i].Text)
}

// replaceWord puts w where the menu's word is, the cursor after it.
func (m *Model) replaceWord(w string) {
	text := m.ta.Value()
	s := m.menu.start
	e := min(s+len(m.menu.cur), len(text))
	m.setText(text[:s]+w+text[e:], s+len(w))
	m.menu.cur = w
}

func commonPrefix(items []Completion) string {
	p := items[0].Text
	for _, it := range items[1:] {
		for !strings.HasPrefix(it.Text, p) {
			p = p[:len(p)-1]
		}
	}
	return strings.ToValidUTF8(p, "")
}

func (m Model) menuView() string {
	items := m.menu.items
	first := 0
	if m.menu.sel >= menuRows {
		first = m.menu.sel - menuRows + 1
	}
	last := min(len(items), first+menuRows)
	textW := 0
	for _, it := range items[first:last] {
		textW = max(textW, ansi.StringWidth(termsafe.Line(strings.TrimSpace(it.Text))))
	}
	textW = min(textW, max(8, m.o.Width/2))
	var rows []string
	for i := first; i < last; i++ {
		t := ansi.Truncate(termsafe.Line(strings.TrimSpace(items[i].Text)), textW, "…")
		t += strings.Repeat(" ", textW-ansi.StringWidth(t))
		h := termsafe.Line(items[i].Hint)
		marker := "  "
		if i == m.menu.sel {
			marker = "› "
		}
		rows = append(rows, m.menuRow(marker, t, h, i == m.menu.sel))
	}
	if len(items) > last-first {
		rows = append(rows, ansi.Truncate(fmt.Sprintf("  %d–%d of %d", first+1, last, len(items)), m.o.Width, "…"))
	}
	return strings.Join(rows, "\n")
}

func (m Model) menuRow(marker, text, hint string, selected bool) string {
	w := m.o.Width
	plain := marker + text
	if hint != "" {
		plain += "  " + hint
	}
	if !m.o.Color || ansi.StringWidth(plain) > w {
		plain = ansi.Truncate(plain, w, "…")
		if !m.o.Color {
			return plain
		}
		if selected {
			return lipgloss.NewStyle().Reverse(true).Render(plain)
		}
		return plain
	}
	name := lipgloss.NewStyle()
	if selected {
		name = name.Reverse(true)
	}
	s := marker + name.Render(text)
	if hint != "" {
		s += "  " + lipgloss.NewStyle().Faint(true).Render(hint)
	}
	return s
}

// Chain is a completer that asks each of cs in turn and answers with the
// first that has candidates.
func Chain(cs ...Completer) Completer {
	return func(text string, cursor int) ([]Completion, int) {
		for _, c := range cs {
			if c == nil {
				continue
			}
			if items, start := c(text, cursor); len(items) > 0 {
				return items, start
			}
		}
		return nil, 0
	}
}

// SlashCompleter completes a slash command typed at the start of the input
// from cmds (Text with or without its leading slash; Hint, such as the
// argument hint, shown beside it). A completed command ends with a space, ready
// for its arguments.
func SlashCompleter(cmds []Completion) Completer {
	list := make([]Completion, 0, len(cmds))
	for _, c := range cmds {
		name := strings.TrimSpace(c.Text)
		if name == "" {
			continue
		}
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		list = append(list, Completion{Text: name, Hint: c.Hint})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Text < list[j].Text })
	return func(text string, cursor int) ([]Completion, int) {
		word := text[:cursor]
		if !strings.HasPrefix(word, "/") || strings.IndexFunc(word, unicode.IsSpace) >= 0 {
			return nil, 0
		}
		var out []Completion
		for _, c := range list {
			if strings.HasPrefix(c.Text, word) {
				out = append(out, Completion{Text: c.Text + " ", Hint: c.Hint})
			}
		}
		return out, 0
	}
}

// refKinds are the context references a message may hold.
var refKinds = []Completion{
	{Text: "@file:", Hint: "a file's contents"},
	{Text: "@folder:", Hint: "a folder's listing"},
	{Text: "@diff ", Hint: "the unstaged changes"},
	{Text: "@staged ", Hint: "the staged changes"},
	{Text: "@git:", Hint: "the last N commits (@git:N)"},
}

// maxPathItems bounds the candidates of a path, for a huge directory.
const maxPathItems = 200

// PathCompleter completes `@` references in the word before the cursor: the
// reference kinds after a bare `@`, and the paths of `@file:` and `@folder:`
// (relative to root unless absolute; folders only for `@folder:`). A folder
// completes with its slash, so Tab goes on into it; a file with a space.
func PathCompleter(root string) Completer {
	return func(text string, cursor int) ([]Completion, int) {
		start := 0
		if i := strings.LastIndexFunc(text[:cursor], unicode.IsSpace); i >= 0 {
			_, n := utf8.DecodeRuneInString(text[i:])
			start = i + n
		}
		word := text[start:cursor]
		if !strings.HasPrefix(word, "@") {
			return nil, 0
		}
		kind := ""
		for _, k := range []string{"@file:", "@folder:"} {
			if strings.HasPrefix(word, k) {
				kind = k
			}
		}
		if kind == "" {
			var out []Completion
			for _, k := range refKinds {
				if strings.HasPrefix(k.Text, word) && k.Text != word {
					out = append(out, k)
				}
			}
			return out, start
		}
		return paths(root, kind, word[len(kind):]), start
	}
}

func paths(root, kind, p string) []Completion {
	dir, base := p[:strings.LastIndexByte(p, '/')+1], p[strings.LastIndexByte(p, '/')+1:]
	abs := dir
	if !filepath.IsAbs(dir) {
		abs = filepath.Join(root, dir)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []Completion
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		info, err := os.Stat(filepath.Join(abs, name)) // follows a symlink to what it names
		if err != nil {
			continue
		}
		if info.IsDir() {
			out = append(out, Completion{Text: kind + dir + name + "/", Hint: "folder"})
		} else if kind == "@file:" {
			out = append(out, Completion{Text: kind + dir + name + " ", Hint: size(info.Size())})
		}
		if len(out) == maxPathItems {
			break
		}
	}
	return out
}

func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}
