package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table renders aligned columns; colour only when the App allows it.
type table struct {
	color bool
	rows  [][]string
	raw   [][]string // cell text without escape codes, for width
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
)

func (t *table) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *table) status(s string) string {
	switch s {
	case "enabled":
		return t.paint(ansiGreen, s)
	case "disabled", "removed":
		return t.paint(ansiRed, s)
	default:
		return t.paint(ansiYellow, s)
	}
}

func (t *table) header(cells ...string) {
	painted := make([]string, len(cells))
	for i, c := range cells {
		painted[i] = t.paint(ansiBold, c)
	}
	t.rows = append(t.rows, painted)
	t.raw = append(t.raw, cells)
}

func (t *table) row(cells ...string) {
	raw := make([]string, len(cells))
	for i, c := range cells {
		raw[i] = stripANSI(c)
	}
	t.rows = append(t.rows, cells)
	t.raw = append(t.raw, raw)
}

func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (t *table) write(w io.Writer) {
	widths := map[int]int{}
	for _, r := range t.raw {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	for ri, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(t.raw[ri][i])+2))
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
