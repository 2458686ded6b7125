package toolview

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Approval is what the approval modal shows: the command exactly as it would
// run, what it is (Description: "recursive delete"), who asked (Origin: "the
// model", `plugin "x"`), the answers offered and the one selected.
type Approval struct {
	Command, Description, Origin string
	Choices                      []string // the approval package's names (Choices); empty: all four
	Selected                     int
	Hint                         string // a line of key help under the choices ("" for none)
}

// Choices are the answers a human can give, as the approval package names
// them; a plugin's request is not offered "always".
func Choices(byPlugin bool) []string {
	if byPlugin {
		return []string{string(approval.ChoiceOnce), string(approval.ChoiceSession), string(approval.ChoiceDeny)}
	}
	return []string{string(approval.ChoiceOnce), string(approval.ChoiceSession), string(approval.ChoiceAlways), string(approval.ChoiceDeny)}
}

const minModalWidth = 20

// ApprovalModal is the approval request in a bordered box width columns wide:
// a title with the description, who asked, the command (each of its lines
// marked $, a line too long for the box continued on the next, unmarked; its
// control characters written out, never obeyed), and the choices with the
// selected one highlighted (bracketed without colour).
func ApprovalModal(a Approval, width int, color bool) string {
	st := newStyles(color)
	width = max(width, minModalWidth)
	inner := width - 4 // the border and one column of padding each side
	var lines []string
	addWrapped := func(style lipgloss.Style, s string) {
		for _, l := range strings.Split(ansi.Hardwrap(ansi.Wrap(s, inner, ""), inner, true), "\n") {
			lines = append(lines, render(style, color, l))
		}
	}

	title := "⚠ Approval needed"
	if d := strings.TrimSpace(a.Description); d != "" {
		title += ": " + termsafe.Line(d)
	}
	addWrapped(st.title, title)
	origin := strings.TrimSpace(a.Origin)
	if origin == "" {
		origin = "the model"
	}
	addWrapped(st.dim, "asked by "+termsafe.Line(origin)+"; the command, exactly as it would run:")
	lines = append(lines, "")
	for _, cl := range strings.Split(a.Command, "\n") {
		for i, seg := range hardwrap(termsafe.Line(strings.TrimSuffix(cl, "\r")), inner-2) {
			mark := "  "
			if i == 0 {
				mark = "$ "
			}
			lines = append(lines, render(st.dim, color, mark)+render(st.command, color, seg))
		}
	}
	lines = append(lines, "")
	lines = append(lines, choiceLines(a, inner, st)...)
	if a.Hint != "" {
		addWrapped(st.dim, termsafe.Line(a.Hint))
	}

	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Width(width)
	if color {
		box = box.BorderForeground(lipgloss.Yellow)
	}
	return box.Render(strings.Join(lines, "\n"))
}

// hardwrap cuts s into pieces of at most width columns, every character kept
// (the command is shown whole, never cut with …).
func hardwrap(s string, width int) []string {
	if width < 1 || ansi.StringWidth(s) <= width {
		return []string{s}
	}
	return strings.Split(ansi.Hardwrap(s, width, true), "\n")
}

// choiceLines lays the choices out in as few lines as fit inner columns.
func choiceLines(a Approval, inner int, st styles) []string {
	choices := a.Choices
	if len(choices) == 0 {
		choices = Choices(false)
	}
	var out []string
	cur, curW := "", 0
	for i, c := range choices {
		label := fit(termsafe.Line(c), inner-2)
		var shown string
		if i == a.Selected {
			if st.color {
				shown = st.selected.Render(" " + label + " ")
			} else {
				shown = "[" + label + "]"
			}
		} else {
			shown = render(st.choice, st.color, " "+label+" ")
		}
		w := ansi.StringWidth(label) + 2
		if curW > 0 && curW+1+w > inner {
			out = append(out, cur)
			cur, curW = "", 0
		}
		if curW > 0 {
			cur += " "
			curW++
		}
		cur += shown
		curW += w
	}
	if curW > 0 {
		out = append(out, cur)
	}
	return out
}
