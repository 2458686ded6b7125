package chatui

// Stand-ins for internal/chatui/editor and mdstream until they land
// on main: the same shapes as their APIs (docs tui-api), so that swapping
// each for the real package is a change of this file only.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// ---- editor ----

type editorCompletion struct{ Text, Hint string }

type editorCompleter func(text string, cursor int) (items []editorCompletion, wordStart int)

type editorHistory struct {
	path    string
	entries []string
}

func openEditorHistory(path string, _ int) (*editorHistory, error) {
	h := &editorHistory{path: path}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		var s string
		if json.Unmarshal([]byte(l), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	return h, nil
}

func (h *editorHistory) Add(entry string) error {
	h.entries = append(h.entries, entry)
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(entry)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (h *editorHistory) Entries() []string { return h.entries }

type editorOptions struct {
	History  *editorHistory
	Complete editorCompleter
	Prompt   string
	Width    int
	Color    bool
}

type editorModel struct {
	ta   textarea.Model
	o    editorOptions
	hist int // index into History while browsing; len = not browsing
}

type editorSubmitMsg struct{ Text string }

type editorClearScreenMsg struct{}

func newEditor(o editorOptions) editorModel {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = o.Prompt
	ta.DynamicHeight = true
	ta.MaxHeight = 8
	ta.KeyMap.InsertNewline.SetKeys("ctrl+j")
	ta.Focus()
	m := editorModel{ta: ta, o: o}
	if o.History != nil {
		m.hist = len(o.History.Entries())
	}
	m.SetWidth(o.Width)
	return m
}

func (m editorModel) Update(msg tea.Msg) (editorModel, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "enter":
			text := m.ta.Value()
			if strings.TrimSpace(text) == "" {
				return m, nil
			}
			if m.o.History != nil {
				_ = m.o.History.Add(text)
				m.hist = len(m.o.History.Entries())
			}
			m.ta.Reset()
			return m, func() tea.Msg { return editorSubmitMsg{Text: text} }
		case "ctrl+l":
			return m, func() tea.Msg { return editorClearScreenMsg{} }
		case "up", "down":
			if m.o.History != nil && m.ta.LineCount() <= 1 {
				e := m.o.History.Entries()
				if k.String() == "up" && m.hist > 0 {
					m.hist--
					m.ta.SetValue(e[m.hist])
				} else if k.String() == "down" && m.hist < len(e) {
					m.hist++
					if m.hist == len(e) {
						m.ta.SetValue("")
					} else {
						m.ta.SetValue(e[m.hist])
					}
				}
				return m, nil
			}
		case "tab":
			if m.o.Complete != nil {
				text := m.ta.Value()
				items, start := m.o.Complete(text, len(text))
				if len(items) > 0 {
					m.ta.SetValue(text[:start] + items[0].Text)
				}
				return m, nil
			}
		}
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	return m, cmd
}

func (m editorModel) View() string { return m.ta.View() }

func (m *editorModel) SetWidth(w int) { m.ta.SetWidth(max(w, 4)) }

func (m editorModel) Value() string { return m.ta.Value() }

func (m *editorModel) SetValue(s string) { m.ta.SetValue(s) }

func (m *editorModel) Reset() { m.ta.Reset() }

// ---- mdstream ----

type mdOptions struct {
	Width int
	Color bool
}

type mdStream struct {
	o   mdOptions
	buf string
}

func newMDStream(o mdOptions) *mdStream { return &mdStream{o: o} }

func (s *mdStream) Write(delta string) []string {
	s.buf += delta
	i := strings.LastIndexByte(s.buf, '\n')
	if i < 0 {
		return nil
	}
	done := s.buf[:i]
	s.buf = s.buf[i+1:]
	return mdLines(done, s.o)
}

func (s *mdStream) Tail() string { return strings.Join(mdLines(s.buf, s.o), "\n") }

func (s *mdStream) Close() []string {
	if s.buf == "" {
		return nil
	}
	out := mdLines(s.buf, s.o)
	s.buf = ""
	return out
}

func mdLines(text string, o mdOptions) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = termsafe.Line(l)
		if o.Width > 0 {
			l = ansi.Wrap(l, o.Width, "")
		}
		out = append(out, strings.Split(l, "\n")...)
	}
	return out
}

func mdRender(md string, o mdOptions) string { return strings.Join(mdLines(md, o), "\n") }

func mdReasoning(text string, o mdOptions) string {
	s := mdRender(text, o)
	if o.Color {
		return "\x1b[2m" + s + "\x1b[22m"
	}
	return s
}
