package chatui

import (
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/chatui/mdstream"
)

// foldLines is how much of the model's thinking the transcript shows; Ctrl-O
// prints the rest. Thinking can run to pages that bury the answer.
const foldLines = 3

// reasoningLines is the thinking text rendered dim at the screen's width,
// kept while the text and the width stay the same (the tail repaints on
// every spinner frame).
func (m *Model) reasoningLines() []string {
	r := m.reasoning.String()
	if m.rsMemo.n != len(r) || m.rsMemo.width != m.width {
		m.rsMemo.n, m.rsMemo.width = len(r), m.width
		m.rsMemo.lines = strings.Split(mdstream.Reasoning(r, m.mdOpts()), "\n")
	}
	return m.rsMemo.lines
}

type reasoningMemo struct {
	n, width int
	lines    []string
}

// foldedReasoning is the finished thinking for the scrollback: its first
// lines, then how many more Ctrl-O shows.
func (m *Model) foldedReasoning() []string {
	lines := m.reasoningLines()
	if len(lines) <= foldLines+1 {
		return lines
	}
	full := strings.Join(lines, "\n")
	m.expand = func() string { return full }
	more := fmt.Sprintf("  … %d more lines of reasoning (Ctrl-O shows them)", len(lines)-foldLines)
	return append(lines[:foldLines:foldLines], style(m.o.Color, styleDim, more))
}

// reasoningTail is the thinking while it streams: its last lines under a
// note of how long it is.
func (m *Model) reasoningTail() string {
	lines := m.reasoningLines()
	if len(lines) <= foldLines {
		return strings.Join(lines, "\n")
	}
	head := style(m.o.Color, styleDim, fmt.Sprintf("  thinking… (%d lines)", len(lines)))
	return head + "\n" + strings.Join(lines[len(lines)-foldLines:], "\n")
}

// resetReasoning empties the thinking text (a new turn, or it went to the
// scrollback) and the rendering kept of it.
func (m *Model) resetReasoning() {
	m.reasoning.Reset()
	m.rsMemo = reasoningMemo{}
}
