// Package toolview renders what the terminal chat shows of tool calls: a
// one-line header per call (a spinner, then ✓, ✗ or ⊘, the tool, its
// arguments in brief, how long it took), a one-line summary of the result or
// the whole result wrapped, the diff a file edit is about to make, and the
// approval modal.
//
// Everything shown comes from outside (the model's arguments, tool output,
// plugin names and commands), so every piece is sanitised with termsafe
// before it is styled: the only escape sequences in the output are
// toolview's own, and none at all without colour.
package toolview

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles are the styles of one rendering; without colour every one is the
// empty style, which renders text unchanged.
type styles struct {
	ok, fail, blocked, spinner, name, dim, add, del, hunk, file, border, title, command, selected, choice lipgloss.Style
	color                                                                                                 bool
}

func newStyles(color bool) styles {
	if !color {
		return styles{}
	}
	s := lipgloss.NewStyle()
	return styles{
		ok:       s.Foreground(lipgloss.Green),
		fail:     s.Foreground(lipgloss.Red),
		blocked:  s.Foreground(lipgloss.Yellow),
		spinner:  s.Foreground(lipgloss.Cyan),
		name:     s.Bold(true),
		dim:      s.Faint(true),
		add:      s.Foreground(lipgloss.Green),
		del:      s.Foreground(lipgloss.Red),
		hunk:     s.Foreground(lipgloss.Cyan),
		file:     s.Bold(true),
		border:   s.Foreground(lipgloss.Yellow),
		title:    s.Bold(true).Foreground(lipgloss.Yellow),
		command:  s.Bold(true),
		selected: s.Bold(true).Reverse(true),
		choice:   s,
		color:    true,
	}
}

// render styles s, or returns it as it is without colour.
func render(st lipgloss.Style, color bool, s string) string {
	if !color || s == "" {
		return s
	}
	return st.Render(s)
}

// fit cuts s (already sanitised, unstyled) to width columns, marking a cut
// with …; width < 1 leaves it whole.
func fit(s string, width int) string {
	if width < 1 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// expandTabs replaces tabs by spaces to the next multiple of 4 columns: a tab
// is neither shown as \t nor left for the terminal to place.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, line := range strings.SplitAfter(s, "\n") {
		col = 0
		for _, r := range line {
			switch r {
			case '\t':
				n := 4 - col%4
				b.WriteString(strings.Repeat(" ", n))
				col += n
			default:
				b.WriteRune(r)
				col += ansi.StringWidth(string(r))
			}
		}
	}
	return b.String()
}
