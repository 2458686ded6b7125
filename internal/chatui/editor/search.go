package editor

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// searchState is Ctrl-R's reverse incremental search: the match is shown in
// the editor itself, the query on a line below.
type searchState struct {
	active bool
	query  string
	pos    int  // index of the shown match in the history; Len() before the first
	failed bool // the query matches nothing at or before pos

	saved       string // the text before the search, for Esc
	savedCursor int
}

func (m *Model) startSearch() {
	if m.o.History == nil {
		return
	}
	m.closeMenu()
	m.search = searchState{
		active: true, pos: m.o.History.Len(),
		saved: m.ta.Value(), savedCursor: m.cursorOffset(),
	}
}

// searchKey handles a key during the search and reports whether it is done
// with it; a key it does not take ends the search, keeping the match.
func (m *Model) searchKey(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "ctrl+r":
		m.searchFrom(m.search.pos - 1)
		return true
	case "enter":
		m.search.active = false
		return true
	case "esc", "ctrl+g":
		m.setText(m.search.saved, m.search.savedCursor)
		m.search = searchState{}
		return true
	case "backspace", "ctrl+h":
		q := []rune(m.search.query)
		if len(q) == 0 {
			return true
		}
		m.search.query = string(q[:len(q)-1])
		m.search.pos = m.o.History.Len()
		if m.search.query == "" {
			m.search.failed = false
			m.setText(m.search.saved, m.search.savedCursor)
			return true
		}
		m.searchFrom(m.search.pos - 1)
		return true
	}
	if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
		m.searchType(k.Text)
		return true
	}
	m.search.active = false
	return false
}

// searchType extends the query; the shown match stays while it still matches.
func (m *Model) searchType(s string) {
	m.search.query += s
	m.searchFrom(min(m.search.pos, m.o.History.Len()-1))
}

// searchFrom shows the newest entry at or before index i that contains the
// query (ignoring case), or marks the search failed and keeps what is shown.
func (m *Model) searchFrom(i int) {
	h := m.o.History
	q := strings.ToLower(m.search.query)
	for ; i >= 0; i-- {
		e := h.At(i)
		lower := strings.ToLower(e)
		at := strings.Index(lower, q)
		if at < 0 {
			continue
		}
		if len(lower) != len(e) {
			at = len(e) // case folding moved the bytes: cursor at the end
		}
		m.search.pos, m.search.failed = i, false
		m.setText(e, at)
		return
	}
	m.search.failed = true
}

func (m Model) searchView() string {
	label := "history search: "
	if m.search.failed {
		label = "history search (no match): "
	}
	q := termsafe.Line(m.search.query)
	help := "  enter accept · esc cancel · ctrl+r older"
	w := m.o.Width
	if ansi.StringWidth(label+q+help) > w {
		help = ""
	}
	if ansi.StringWidth(label+q) > w {
		return ansi.Truncate(label+q, w, "…")
	}
	if !m.o.Color {
		return label + q + help
	}
	dim := lipgloss.NewStyle().Faint(true)
	s := dim.Render(label) + q
	if help != "" {
		s += dim.Render(help)
	}
	return s
}
