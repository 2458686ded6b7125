package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table renders aligned columns; colour only when the App allows it. Cells are
// text from outside hermes, made safe as they are added; hermes' own colours
// are applied when the table is written, after that.
type table struct {
	color bool
	head  []string
	rows  [][]string
	codes map[[2]int]string // (row, column) → the colour it is painted
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
)

// statusColour is the colour of a plugin state.
func statusColour(s string) string {
	switch s {
	case "enabled", "active":
		return ansiGreen
	case "disabled", "removed":
		return ansiRed
	}
	return ansiYellow
}

func (t *table) header(cells ...string) { t.head = cells }

func (t *table) row(cells ...string) {
	r := make([]string, len(cells))
	for i, c := range cells {
		r[i] = safe(c)
	}
	t.rows = append(t.rows, r)
}

// paintLast paints column col of the last row added.
func (t *table) paintLast(col int, code string) {
	if t.codes == nil {
		t.codes = map[[2]int]string{}
	}
	t.codes[[2]int{len(t.rows) - 1, col}] = code
}

func (t *table) write(w io.Writer) {
	widths := map[int]int{}
	all := t.rows
	if t.head != nil {
		all = append([][]string{t.head}, t.rows...)
	}
	for _, r := range all {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	for ri, r := range all {
		var line strings.Builder
		for i, c := range r {
			code := ""
			switch {
			case !t.color || c == "":
			case t.head != nil && ri == 0:
				code = ansiBold
			case t.head != nil:
				code = t.codes[[2]int{ri - 1, i}]
			default:
				code = t.codes[[2]int{ri, i}]
			}
			if code != "" {
				line.WriteString(code + c + ansiReset)
			} else {
				line.WriteString(c)
			}
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
	}
}

// truncate shortens a cell to n runes on one line, ending in "..." when cut.
func truncate(s string, n int) string {
	// The usual cell (one short line) is returned as it is, without a copy: a
	// search can print a thousand rows.
	if len(s) <= n && strings.IndexByte(s, '\n') < 0 && strings.TrimSpace(s) == s {
		return s
	}
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	k := 0
	for i := range s {
		if k == n-3 {
			return s[:i] + "..."
		}
		k++
	}
	return s
}
