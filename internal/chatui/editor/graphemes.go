package editor

import (
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/rivo/uniseg"
)

// textarea moves and deletes by rune; a user sees characters (grapheme
// clusters): an emoji with a skin tone, a flag, a ZWJ family, a letter with a
// combining accent. These keep the cursor between clusters.

// prevBoundary is the rune offset in line of the cluster boundary before col.
func prevBoundary(line string, col int) int {
	prev, at := 0, 0
	state := -1
	for rest := line; rest != "" && at < col; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		prev = at
		at += utf8.RuneCountInString(c)
	}
	return prev
}

// nextBoundary is the rune offset in line of the cluster boundary after col.
func nextBoundary(line string, col int) int {
	at := 0
	state := -1
	for rest := line; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		at += utf8.RuneCountInString(c)
		if at > col {
			return at
		}
	}
	return at
}

// onBoundary reports whether rune offset col of line is between clusters.
func onBoundary(line string, col int) bool {
	return col == 0 || prevBoundary(line, col+1) == col || col >= utf8.RuneCountInString(line)
}

// graphemeKey does a cursor key by whole clusters where textarea would split
// one, and reports whether it did the key.
func (m *Model) graphemeKey(ks string) bool {
	line, col := m.currentLine(), m.ta.Column()
	switch ks {
	case "left", "ctrl+b":
		if p := prevBoundary(line, col); col > 0 && p < col-1 {
			m.ta.SetCursorColumn(p)
			m.moved = true
			return true
		}
	case "right", "ctrl+f":
		if n := nextBoundary(line, col); n > col+1 {
			m.ta.SetCursorColumn(n)
			m.moved = true
			return true
		}
	case "backspace", "ctrl+h":
		if p := prevBoundary(line, col); col > 0 && p < col-1 {
			for range col - p {
				m.ta, _ = m.ta.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
			}
			return true
		}
	case "delete":
		if n := nextBoundary(line, col); n > col+1 {
			for range n - col {
				m.ta, _ = m.ta.Update(tea.KeyPressMsg{Code: tea.KeyDelete})
			}
			return true
		}
	}
	return false
}

// snapToCluster moves a cursor that landed inside a cluster (up and down
// move by columns) to the cluster's end.
func (m *Model) snapToCluster() {
	line, col := m.currentLine(), m.ta.Column()
	if !onBoundary(line, col) {
		m.ta.SetCursorColumn(nextBoundary(line, col))
		m.moved = true
	}
}
