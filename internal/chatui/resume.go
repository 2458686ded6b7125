package chatui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/chatui/mdstream"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// recapTurns is how many of a resumed session's last exchanges are shown.
const recapTurns = 3

type (
	sessionsMsg struct {
		list []session.Session
		err  error
	}
	resumedMsg struct {
		id   string
		err  error
		snap snapshot
	}
)

// sessionItem is one row of the /resume picker.
type sessionItem struct{ s session.Session }

func (i sessionItem) label() string {
	l := i.s.Title
	if l == "" {
		l = i.s.Preview
	}
	return termsafe.Line(strings.Join(strings.Fields(l), " "))
}

func (i sessionItem) FilterValue() string { return i.s.ID + " " + i.label() }
func (i sessionItem) Title() string       { return termsafe.Line(i.s.ID) + "  " + i.label() }
func (i sessionItem) Description() string {
	return fmt.Sprintf("%s · %d msgs", i.s.UpdatedAt.Local().Format("2006-01-02 15:04"), i.s.MessageCount)
}

// sessionPicker is the list /resume shows.
type sessionPicker struct{ l list.Model }

func newSessionPicker(ss []session.Session, w, h int) *sessionPicker {
	items := make([]list.Item, len(ss))
	for i, s := range ss {
		items[i] = sessionItem{s}
	}
	d := list.NewDefaultDelegate()
	p := &sessionPicker{l: list.New(items, d, w, min(h-2, 3*len(ss)+6))}
	p.l.Title = "Resume a session (Enter picks, Esc goes back)"
	p.l.SetShowHelp(false)
	p.l.SetFilteringEnabled(false)
	return p
}

func (p *sessionPicker) setSize(w, h int) { p.l.SetSize(w, min(h-2, p.l.Height())) }

func (p *sessionPicker) view() string { return p.l.View() }

// resume is /resume [ID]: without an id, the picker of recent sessions.
func (m *Model) resume(id string) tea.Cmd {
	ctx, chat := m.ctx, m.chat
	m.busy, m.waiting = true, "/resume"
	if id == "" {
		return func() tea.Msg {
			l, err := chat.RecentSessions(ctx, 20)
			return sessionsMsg{list: l, err: err}
		}
	}
	return func() tea.Msg {
		full, err := chat.Resume(ctx, id)
		return resumedMsg{id: full, err: err, snap: takeSnapshot(ctx, chat)}
	}
}

func (m *Model) openPicker(msg sessionsMsg) tea.Cmd {
	m.busy, m.waiting = false, ""
	switch {
	case msg.err != nil:
		m.print("/resume failed: " + termsafe.Line(msg.err.Error()))
		return m.next()
	case len(msg.list) == 0:
		m.print("No stored sessions yet.")
		return m.next()
	}
	m.picker = newSessionPicker(msg.list, m.width, m.high)
	return nil
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "ctrl+c", "q":
		m.picker = nil
		return m.next()
	case "enter":
		it, ok := m.picker.l.SelectedItem().(sessionItem)
		m.picker = nil
		if !ok {
			return nil
		}
		return m.resume(it.s.ID)
	}
	var cmd tea.Cmd
	m.picker.l, cmd = m.picker.l.Update(k)
	return cmd
}

func (m *Model) resumed(msg resumedMsg) tea.Cmd {
	m.busy, m.waiting = false, ""
	if msg.err != nil {
		m.print("/resume failed: " + termsafe.Line(msg.snap.redact(msg.err.Error())))
		return m.next()
	}
	m.snap = msg.snap
	m.print(recap(m.chat, m.mdOpts())...)
	return m.next()
}

// recap renders the last exchanges of the resumed session as markdown, so
// the user sees where it stopped.
func recap(c Chat, o mdstream.Options) []string {
	msgs := c.History()
	start := len(msgs)
	for n := 0; start > 0 && n < recapTurns; {
		start--
		if msgs[start].Role == "user" {
			n++
		}
	}
	var b strings.Builder
	for _, m := range msgs[start:] {
		switch {
		case m.Role == "user":
			text, _, _ := strings.Cut(m.Content, "\n\n--- ") // not the attached context
			fmt.Fprintf(&b, "**you:** %s\n\n", c.Redact(text))
		case m.Role == "assistant" && m.Content != "":
			fmt.Fprintf(&b, "**hermes:** %s\n\n", c.Redact(m.Content))
		case m.Role == "assistant":
			var names []string
			for _, tc := range m.ToolCalls {
				names = append(names, "`"+tc.Function.Name+"`")
			}
			fmt.Fprintf(&b, "**hermes:** ⚙ %s\n\n", strings.Join(names, ", "))
		}
	}
	head := "Resumed session " + termsafe.Line(c.SessionID())
	if b.Len() == 0 {
		return []string{head + " (nothing said yet)."}
	}
	return []string{head + "; where it stopped:", mdstream.Render(strings.TrimSpace(b.String()), o)}
}
