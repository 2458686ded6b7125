package pluginsui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Hint is the main screen's key line, upstream's words.
const Hint = "  ↑↓/j/k navigate  PgUp/PgDn page  SPACE toggle  ENTER configure/confirm  ESC done"

const pickerHint = "  ↑↓/j/k navigate  ENTER select  ESC cancel"

// Upstream's colours: green the selected plugin, yellow headers, cyan the
// selected provider row, gray what is dim.
var (
	headerStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Yellow)
	dimStyle      = lipgloss.NewStyle().Faint(true)
	pluginCursor  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Green)
	providerStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan)
	errorStyle    = lipgloss.NewStyle().Foreground(lipgloss.Red)
	plainStyle    = lipgloss.NewStyle()
)

// line is one screen line before it is cut to the width and styled.
type line struct {
	text  string
	style lipgloss.Style
}

// Label is a plugin row's text, sanitised: "<name> — <description>", and
// " [bundled]" for a bundled plugin.
func Label(p Plugin) string {
	s := termsafe.Line(p.Name)
	if p.Description != "" {
		s += " — " + termsafe.Line(p.Description)
	}
	if p.Bundled {
		s += " [bundled]"
	}
	return s
}

func arrow(on bool) string {
	if on {
		return "→"
	}
	return " "
}

// header is the fixed top of a screen: its title, the key hint, a blank line.
func header(title, hint string) []line {
	return []line{{title, headerStyle}, {hint, dimStyle}, {"", plainStyle}}
}

// mainBody is the scrolled part of the main screen and the index of the cursor's line in it.
func (m *Model) mainBody() ([]line, int) {
	var body []line
	focus := 0
	if len(m.plugins) > 0 {
		body = append(body, line{"  General Plugins", headerStyle})
		for i, p := range m.plugins {
			check := " "
			if m.checked[i] {
				check = "✓"
			}
			st := plainStyle
			if i == m.cursor {
				st, focus = pluginCursor, len(body)
			}
			body = append(body, line{fmt.Sprintf(" %s [%s] %s", arrow(i == m.cursor), check, Label(p)), st})
		}
	}
	body = append(body, line{"", plainStyle}, line{"  Provider Plugins", headerStyle})
	for i, s := range m.slots {
		row := len(m.plugins) + i
		st := plainStyle
		if row == m.cursor {
			st, focus = providerStyle, len(body)
		}
		title := termsafe.Line(s.Title)
		body = append(body, line{fmt.Sprintf(" %s   %-24s ▸ %s", arrow(row == m.cursor), title, termsafe.Line(s.label())), st})
	}
	return body, focus
}

func (p *picker) body() ([]line, int) {
	body := make([]line, 0, len(p.labels))
	for i, l := range p.labels {
		mark := "( )"
		if i == p.selected {
			mark = "(●)"
		}
		st := plainStyle
		if i == p.cursor {
			st = pluginCursor
		}
		body = append(body, line{fmt.Sprintf(" %s %s %s", arrow(i == p.cursor), mark, l), st})
	}
	return body, p.cursor
}

// View implements tea.Model: the screen cut to the terminal, whatever its size.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// layout is the screen's parts: the fixed header, the scrolled body with the
// index of the cursor's line in it, the footer, and where the body is scrolled to.
func (m *Model) layout() (head, body, foot []line, focus int, scroll *int) {
	if m.picker != nil {
		head = header(termsafe.Line(m.slots[m.picker.slot].Title)+" (select one)", pickerHint)
		body, focus = m.picker.body()
		scroll = &m.picker.scroll
	} else {
		head = header("Plugins", Hint)
		body, focus = m.mainBody()
		scroll = &m.scroll
	}
	if m.status != "" {
		foot = []line{{m.status, errorStyle}}
	}
	return head, body, foot, focus, scroll
}

// follow scrolls the body as little as keeps the cursor's line on the screen.
func (m *Model) follow() {
	head, body, foot, focus, scroll := m.layout()
	_, rows, _ := split(len(head), len(foot), m.height)
	switch {
	case focus < *scroll:
		*scroll = focus
	case focus >= *scroll+rows:
		*scroll = focus - rows + 1
	}
	*scroll = max(0, min(*scroll, len(body)-rows))
}

// split shares height rows out: how many header lines, body rows and footer
// lines are shown. The body always gets a row; the header gives way first
// from the bottom, after the footer.
func split(headN, footN, height int) (h, rows, f int) {
	height = max(1, height)
	rows = height - headN - footN
	f = footN
	if rows < 1 {
		f = 0
		rows = max(1, height-headN)
	}
	h = min(headN, height-rows)
	return h, rows, f
}

// Render is the screen as text with its styles.
func (m *Model) Render() string {
	head, body, foot, _, scroll := m.layout()
	h, rows, f := split(len(head), len(foot), m.height)
	start := max(0, min(*scroll, len(body)-rows))
	body = body[start:min(len(body), start+rows)]
	lines := append(append(append([]line{}, head[:h]...), body...), foot[:f]...)
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		// One column short of the edge, as curses' addnstr(max_x-1): a
		// character in the last column makes some terminals wrap.
		text := ansi.Truncate(l.text, max(0, m.width-1), "")
		if text != "" {
			text = l.style.Render(text)
		}
		b.WriteString(text)
	}
	return b.String()
}
