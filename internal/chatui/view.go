package chatui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/chatui/toolview"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// snapshot is what the status line shows of the chat, read in the goroutine
// that just used the chat.
type snapshot struct {
	model, provider, session, title string
	resumed, streams                bool
	contextLen                      int
	usage                           []session.TurnUsage
	redact                          func(string) string
}

func takeSnapshot(ctx context.Context, c Chat) snapshot {
	s := snapshot{model: c.Model(), provider: c.Provider(), session: c.SessionID(), streams: c.Streams(),
		contextLen: c.ContextLength(), redact: c.Redact}
	if r, ok := c.(interface{ Resumed() bool }); ok {
		s.resumed = r.Resumed()
	}
	s.readStore(ctx, c)
	return s
}

// firstSnapshot is the status line of a chat just opened. A new session has
// no title or usage yet: the store is read only for a resumed one, keeping
// the start-up off SQLite.
func firstSnapshot(ctx context.Context, c Chat) snapshot {
	s := snapshot{model: c.Model(), provider: c.Provider(), session: c.SessionID(), streams: c.Streams(),
		contextLen: c.ContextLength(), redact: c.Redact}
	if r, ok := c.(interface{ Resumed() bool }); ok && r.Resumed() {
		s.resumed = true
		s.readStore(ctx, c)
	}
	return s
}

// readStore reads the session's title and usage from the store.
func (s *snapshot) readStore(ctx context.Context, c Chat) {
	s.title, _ = c.SetTitle(ctx, "")
	s.usage, _ = c.Usage(ctx)
}

// View implements tea.Model: the streaming tail, the running tools, the
// editor (or the modal or the picker) and the status line. The transcript
// is in the scrollback already.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	var parts []string
	if tail := m.tail(); tail != "" {
		parts = append(parts, tail)
	}
	for _, c := range m.tools {
		parts = append(parts, toolview.Header(c, m.width, frames[m.frame%len(frames)], m.o.Color))
	}
	switch {
	case m.appr != nil:
		parts = append(parts, m.approvalView())
	case m.picker != nil:
		parts = append(parts, m.picker.view())
	default:
		parts = append(parts, "", m.ed.View())
	}
	parts = append(parts, m.status())
	return tea.NewView(strings.Join(parts, "\n"))
}

// tail is the unfinished part of the answer, cut to what fits above the editor.
func (m *Model) tail() string {
	var s string
	if m.reasoning.Len() > 0 {
		s = m.reasoningTail()
	}
	if m.md != nil {
		if t := m.md.Tail(); t != "" {
			if s != "" {
				s += "\n"
			}
			s += t
		}
	}
	if s == "" {
		return ""
	}
	room := max(m.high-8, 3)
	lines := strings.Split(s, "\n")
	if len(lines) > room {
		lines = lines[len(lines)-room:]
	}
	return strings.Join(lines, "\n")
}

// status is the line under the editor: model, session, tokens, cost,
// context use and what hermes waits for.
func (m *Model) status() string {
	if m.chat == nil {
		return style(m.o.Color, styleDim, "starting…")
	}
	s := m.snap
	parts := []string{termsafe.Line(s.model) + " (" + termsafe.Line(s.provider) + ")"}
	sess := "session " + termsafe.Line(s.session)
	if s.title != "" {
		sess += " “" + termsafe.Line(s.title) + "”"
	}
	parts = append(parts, sess)
	if n := len(s.usage); n > 0 {
		last := s.usage[n-1]
		var in, out int
		var cost float64
		priced := true
		for _, u := range s.usage {
			in, out = in+u.PromptTokens, out+u.CompletionTokens
			if u.CostUSD == nil {
				priced = false
			} else {
				cost += *u.CostUSD
			}
		}
		parts = append(parts, fmt.Sprintf("last %s↑ %s↓", grouped(last.PromptTokens), grouped(last.CompletionTokens)),
			fmt.Sprintf("total %s↑ %s↓", grouped(in), grouped(out)))
		if priced {
			parts = append(parts, fmt.Sprintf("$%.4f", cost))
		}
		if s.contextLen > 0 {
			parts = append(parts, fmt.Sprintf("ctx %.0f%% of %s", 100*float64(last.PromptTokens)/float64(s.contextLen), grouped(s.contextLen)))
		}
	}
	switch {
	case m.appr != nil:
		parts = append(parts, "waiting for approval")
	case m.waiting == "model":
		// The wait names the model in place of the model part, which would
		// say the same again and push the retry notice off a narrow line.
		parts[0] = frames[m.frame%len(frames)] + " waiting for " + parts[0]
	case m.waiting != "":
		parts = append(parts, frames[m.frame%len(frames)]+" waiting for "+m.waiting)
	}
	if m.notice != "" && m.busy {
		parts = append(parts, m.notice)
	}
	return style(m.o.Color, styleDim, fitParts(parts, m.width, 2))
}

// fitParts joins parts with " · " on at most rows lines of width; a part
// that does not fit starts the next line, the last line is cut.
func fitParts(parts []string, width, rows int) string {
	var lines []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case ansi.StringWidth(cur)+3+ansi.StringWidth(p) <= width || len(lines) == rows-1:
			cur += " · " + p
		default:
			lines = append(lines, cur)
			cur = p
		}
	}
	lines = append(lines, cur)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "…")
	}
	return strings.Join(lines, "\n")
}

// grouped writes n with thousands separators: 128000 → 128,000.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

type styleKind int

const (
	styleDim styleKind = iota
	styleUser
	styleSelected
)

var styles = map[styleKind]lipgloss.Style{
	styleDim:      lipgloss.NewStyle().Faint(true),
	styleUser:     lipgloss.NewStyle().Bold(true),
	styleSelected: lipgloss.NewStyle().Reverse(true),
}

// style styles s when colour is on; without it the text stays plain.
func style(color bool, k styleKind, s string) string {
	if !color {
		return s
	}
	return styles[k].Render(s)
}
