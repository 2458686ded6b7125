package chatui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// hangWrap breaks each line of plain command output at spaces to width, the
// lines it continues indented under where the line's text begins: under a
// table's second column ("  /quit      leave (also …") when that leaves room,
// else under the line's own leading spaces, rather than at the margin.
func hangWrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = hangLine(l, width)
		}
	}
	return strings.Join(lines, "\n")
}

func hangLine(l string, width int) string {
	indent := hangIndent(l)
	if indent >= width/2 {
		indent = len(l) - len(strings.TrimLeft(l, " "))
	}
	if indent >= width/2 || strings.ContainsRune(l, '\x1b') {
		return ansi.Wrap(l, width, "")
	}
	first, _, _ := strings.Cut(ansi.Wrap(l, width, ""), "\n")
	if !strings.HasPrefix(l, first) {
		return ansi.Wrap(l, width, "")
	}
	rest := strings.TrimLeft(l[len(first):], " ")
	pad := strings.Repeat(" ", indent)
	out := []string{first}
	for _, seg := range strings.Split(ansi.Wrap(rest, width-indent, ""), "\n") {
		out = append(out, pad+seg)
	}
	return strings.Join(out, "\n")
}

// hangIndent is the column of a table's second column: the text after the
// first run of two or more spaces that follows some text (0 when none).
func hangIndent(l string) int {
	lead := len(l) - len(strings.TrimLeft(l, " "))
	body := l[lead:]
	gap := strings.Index(body, "  ")
	if gap < 0 {
		return lead
	}
	after := strings.TrimLeft(body[gap:], " ")
	if after == "" {
		return lead
	}
	return ansi.StringWidth(l[:len(l)-len(after)])
}
