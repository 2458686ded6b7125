// Package editor is the input line editor of the interactive chat: a Bubble
// Tea v2 component over bubbles' textarea (which does the editing, wrapping,
// wide characters and scrolling) that adds what a chat prompt needs on top:
// Enter sends and Alt-Enter/Shift-Enter break the line, history across sessions
// (Up/Down at the edges, Ctrl-R reverse search), Tab completion with a menu,
// bracketed paste as one chunk, Ctrl-L.
package editor

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Completion is one candidate of Tab completion.
type Completion struct {
	Text string // replaces the word being completed
	Hint string // shown beside it in the menu
}

// Completer returns candidates for the word that ends at cursor (a byte offset
// in text) and where that word starts. No candidates: nothing to complete.
type Completer func(text string, cursor int) (items []Completion, wordStart int)

// Options configure an editor.
type Options struct {
	History  *History  // nil: no history
	Complete Completer // nil: Tab does nothing
	Prompt   string    // shown before the first line; later lines are indented as wide
	Width    int       // columns of the whole box, prompt included
	Color    bool      // false: no colour (the cursor is still shown, in reverse video)

	// MaxHeight is how many rows the box grows to before it scrolls (default 8).
	MaxHeight int
	// RealCursor leaves the cursor out of View: the caller places the
	// terminal's own cursor at Cursor().
	RealCursor bool
}

// SubmitMsg is sent (through the tea.Cmd Update returns) when Enter sends
// non-empty text. The editor has already added it to the history and emptied
// itself.
type SubmitMsg struct{ Text string }

// ClearScreenMsg is sent on Ctrl-L.
type ClearScreenMsg struct{}

// PasteCutMsg is sent when a paste had more lines than the editor holds
// (textarea's limit of 10,000): the first Kept of its Lines were inserted.
type PasteCutMsg struct{ Lines, Kept int }

// HistoryErrorMsg is sent when a sent entry could not be saved to the history
// file; the text was still sent.
type HistoryErrorMsg struct{ Err error }

const (
	defaultMaxHeight = 8
	defaultWidth     = 80
	maxLines         = 10000 // textarea's own cap on lines

	// fillMarker starts the rows textarea draws past the end of the text: a
	// private-use character, taken out of whatever is typed or pasted.
	fillMarker = '\ue000'
)

// Model is the editor. Like every Bubble Tea model it is a value: keep the one
// Update returns.
type Model struct {
	ta textarea.Model
	o  Options

	// hist is the history position while walking it: -1 when editing the
	// draft, else the index of the entry shown; draft is what was typed before.
	hist  int
	draft string

	search searchState
	menu   menuState

	// The prompt is drawn here rather than by textarea, which would style it
	// again on every row of every render.
	promptW int
	indent  string

	memo *viewMemo // View's last result; a fresh one after every change

	// moved: the text or cursor changed other than through textarea's Update,
	// which scrolls onto the cursor itself.
	moved bool
}

// viewMemo keeps the rendered box until the model changes: the chat repaints
// on every tick of its spinner, and the editor need not render for those.
type viewMemo struct {
	s  string
	ok bool
}

func (m Model) textWidth() int { return max(1, m.o.Width-m.promptW) }

// New returns an editor, focused and empty.
func New(o Options) Model {
	if o.MaxHeight <= 0 {
		o.MaxHeight = defaultMaxHeight
	}
	if o.Width <= 0 {
		o.Width = defaultWidth
	}
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.CharLimit = 0 // a paste has no length cap
	ta.MaxWidth = 0
	// textarea sizes its wrap cache by MaxHeight, and one smaller than the
	// line count rewraps every line on every key (4x the cost of a key with 25
	// lines); its DynamicHeight grows the box only up to MaxHeight. So the box
	// has the fixed height of the limit, textarea scrolls it, and View drops
	// the rows past the end of the text, which start with the marker.
	ta.MaxHeight = maxLines
	ta.SetHeight(o.MaxHeight)
	ta.EndOfBufferCharacter = fillMarker
	ta.KeyMap = keyMap()
	ta.SetStyles(styles(o.Color))
	ta.SetVirtualCursor(!o.RealCursor)

	ta.Focus()
	m := Model{ta: ta, o: o, hist: -1, memo: &viewMemo{}}
	m.promptW = lipgloss.Width(o.Prompt)
	m.indent = strings.Repeat(" ", m.promptW)
	m.ta.SetWidth(m.textWidth())
	m.moved = true
	m.settle()
	return m
}

// keyMap is textarea's map with the chat's keys taken out: Enter sends, Up and
// Down walk history at the edges, Ctrl-D and Ctrl-G mean something else here,
// and Ctrl-V's clipboard read is left to the terminal's own paste.
func keyMap() textarea.KeyMap {
	k := textarea.DefaultKeyMap()
	k.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	k.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	k.SelectAll = key.NewBinding(key.WithDisabled())
	k.Paste = key.NewBinding(key.WithDisabled())
	k.CopySelection = key.NewBinding(key.WithDisabled())
	k.LineNext = key.NewBinding(key.WithKeys("down"))
	k.LinePrevious = key.NewBinding(key.WithKeys("up"))
	return k
}

func styles(color bool) textarea.Styles {
	plain := textarea.StyleState{}
	s := textarea.Styles{Focused: plain, Blurred: plain}
	if color {
		s.Focused.Selection = lipgloss.NewStyle().Reverse(true)
	}
	return s
}

// SetWidth re-wraps the editor to w columns.
func (m *Model) SetWidth(w int) {
	if w <= 0 {
		return
	}
	m.o.Width = w
	m.ta.SetWidth(m.textWidth())
	m.moved = true
	m.settle()
}

// SetCompleter replaces Tab's completer (the plugins' commands arrive after
// the editor is made); nil turns completion off.
func (m *Model) SetCompleter(c Completer) {
	m.o.Complete = c
	m.closeMenu()
	m.memo = &viewMemo{}
}

// SetPrompt replaces the prompt (the chat may show its state in it).
func (m *Model) SetPrompt(p string) {
	m.o.Prompt = p
	m.promptW = lipgloss.Width(p)
	m.indent = strings.Repeat(" ", m.promptW)
	m.ta.SetWidth(m.textWidth())
	m.moved = true
	m.settle()
}

// Width is the editor's width in columns.
func (m Model) Width() int { return m.o.Width }

// Value is the text being edited.
func (m Model) Value() string { return m.ta.Value() }

// SetValue replaces the text; the cursor goes to its end.
func (m *Model) SetValue(s string) {
	m.closeMenu()
	m.search = searchState{}
	m.ta.SetValue(clean(s))
	m.moved = true
	m.settle()
}

// Reset empties the editor and leaves history walking and search.
func (m *Model) Reset() {
	m.ta.Reset()
	m.moved = true
	m.hist, m.draft = -1, ""
	m.search = searchState{}
	m.closeMenu()
	m.settle()
}

// Focus gives the editor the keyboard; Blur takes it away (keys are ignored
// and the cursor is hidden).
func (m *Model) Focus() { m.ta.Focus(); m.memo = &viewMemo{} }

// Blur takes the keyboard away from the editor.
func (m *Model) Blur() { m.ta.Blur(); m.memo = &viewMemo{} }

// Focused reports whether the editor takes keys.
func (m Model) Focused() bool { return m.ta.Focused() }

// Searching reports whether Ctrl-R's reverse search is active.
func (m Model) Searching() bool { return m.search.active }

// MenuOpen reports whether the completion menu is shown.
func (m Model) MenuOpen() bool { return m.menu.open }

// Height is the number of rows View takes.
func (m Model) Height() int { return strings.Count(m.View(), "\n") + 1 }

// Cursor is where the cursor is, relative to View's top left, for a caller
// that shows the terminal's cursor (Options.RealCursor); nil otherwise.
func (m Model) Cursor() *tea.Cursor {
	c := m.ta.Cursor()
	if c != nil {
		c.X += m.promptW
	}
	return c
}

// Update handles a message: keys and pastes edit. Other messages are not the
// editor's (its cursor does not blink, the clipboard is the terminal's), and
// are ignored without a render, so a chat may pass it everything.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if !m.ta.Focused() {
		return m, nil
	}
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
	default:
		return m, nil
	}
	m, cmd := m.update(msg)
	m.settle()
	return m, cmd
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.search.active {
			m.searchType(clean(msg.Content))
			return m, nil
		}
		m.closeMenu()
		text := clean(msg.Content)
		var cut tea.Cmd
		if n, room := strings.Count(text, "\n")+1, maxLines-m.ta.LineCount()+1; n > room {
			cut = func() tea.Msg { return PasteCutMsg{Lines: n, Kept: room} }
		}
		var cmd tea.Cmd
		m.ta, cmd = m.ta.Update(tea.PasteMsg{Content: text})
		return m, tea.Batch(cmd, cut)
	}
	return m, nil
}

func (m Model) key(k tea.KeyPressMsg) (Model, tea.Cmd) {
	ks := k.String()
	switch ks {
	case "ctrl+c", "ctrl+d":
		return m, nil // the chat's own keys: it sees them first
	}
	if m.search.active {
		if done := m.searchKey(k); done {
			return m, nil
		}
		// Any other key ends the search on its match and then does its usual job.
	}
	if m.menu.open {
		if done := m.menuKey(ks); done {
			return m, nil
		}
	}
	switch ks {
	case "enter":
		return m.submit()
	case "ctrl+l":
		return m, func() tea.Msg { return ClearScreenMsg{} }
	case "ctrl+r":
		m.startSearch()
		return m, nil
	case "tab":
		m.complete()
		return m, nil
	case "up", "ctrl+p":
		if m.onFirstRow() && m.older() {
			return m, nil
		}
	case "down", "ctrl+n":
		if m.onLastRow() && m.newer() {
			return m, nil
		}
	}
	if strings.ContainsRune(k.Text, fillMarker) {
		if k.Text = clean(k.Text); k.Text == "" {
			return m, nil
		}
	}
	if ks == "ctrl+p" || ks == "ctrl+n" {
		// Emacs' line keys: textarea's up and down inside the text.
		k = tea.KeyPressMsg{Code: map[string]rune{"ctrl+p": tea.KeyUp, "ctrl+n": tea.KeyDown}[ks]}
	}
	if m.graphemeKey(ks) {
		m.afterEdit(ks, k.Text)
		return m, nil
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(k)
	if k.Code == tea.KeyUp || k.Code == tea.KeyDown {
		m.snapToCluster()
	}
	m.afterEdit(ks, k.Text)
	return m, cmd
}

// afterEdit offers the menu again on what was typed, if a key closed it.
func (m *Model) afterEdit(ks, text string) {
	if m.menu.wasOpen {
		m.menu.wasOpen = false
		if text != "" || ks == "backspace" {
			m.refreshMenu() // typing narrows (or widens) the menu that was open
		}
	}
}

func (m Model) submit() (Model, tea.Cmd) {
	text := m.ta.Value()
	if strings.HasSuffix(text, "\\") && m.atEnd() {
		// A trailing backslash breaks the line, for terminals that send
		// Shift-Enter as a plain Enter.
		m.setText(strings.TrimSuffix(text, "\\")+"\n", len(text))
		return m, nil
	}
	if strings.TrimSpace(text) == "" {
		return m, nil
	}
	var cmds []tea.Cmd
	if m.o.History != nil {
		if err := m.o.History.Add(text); err != nil {
			cmds = append(cmds, func() tea.Msg { return HistoryErrorMsg{Err: err} })
		}
	}
	m.Reset()
	cmds = append(cmds, func() tea.Msg { return SubmitMsg{Text: text} })
	return m, tea.Batch(cmds...)
}

// older shows the previous history entry, the cursor on its first line so that
// Up again goes on to the one before. It reports whether there was one.
func (m *Model) older() bool {
	h := m.o.History
	if h == nil {
		return false
	}
	i := m.hist
	if i < 0 {
		i = h.Len()
	}
	if i == 0 {
		return false
	}
	if m.hist < 0 {
		m.draft = m.ta.Value()
	}
	m.hist = i - 1
	m.moved = true
	m.ta.SetValue(h.At(m.hist))
	m.ta.MoveToBegin()
	m.ta.CursorEnd()
	return true
}

// newer shows the next history entry (or the draft after the newest), the
// cursor at its end so that Down again goes on.
func (m *Model) newer() bool {
	h := m.o.History
	if h == nil || m.hist < 0 {
		return false
	}
	m.hist++
	m.moved = true
	if m.hist >= h.Len() {
		m.hist = -1
		m.ta.SetValue(m.draft)
		m.draft = ""
		return true
	}
	m.ta.SetValue(h.At(m.hist))
	return true
}

func (m Model) onFirstRow() bool {
	return m.ta.Line() == 0 && m.ta.LineInfo().RowOffset == 0
}

func (m Model) onLastRow() bool {
	li := m.ta.LineInfo()
	return m.ta.Line() == m.ta.LineCount()-1 && li.RowOffset >= li.Height-1
}

func (m Model) atEnd() bool {
	return m.ta.Line() == m.ta.LineCount()-1 && m.ta.Column() == len([]rune(m.currentLine()))
}

func (m Model) currentLine() string {
	v := m.ta.Value()
	for range m.ta.Line() {
		i := strings.IndexByte(v, '\n')
		if i < 0 {
			return ""
		}
		v = v[i+1:]
	}
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	return v
}

// cursorOffset is the cursor's byte offset in Value().
func (m Model) cursorOffset() int {
	v := m.ta.Value()
	off := 0
	for range m.ta.Line() {
		i := strings.IndexByte(v[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	line := v[off:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	col := m.ta.Column()
	for i := range line {
		if col == 0 {
			return off + i
		}
		col--
	}
	return off + len(line)
}

// setText replaces the text and puts the cursor at byte offset cursor.
func (m *Model) setText(text string, cursor int) {
	cursor = max(0, min(cursor, len(text)))
	before := text[:cursor]
	row := strings.Count(before, "\n")
	col := len([]rune(before[strings.LastIndexByte(before, '\n')+1:]))
	m.ta.SetValue(text)
	m.moveTo(row, col)
	m.moved = true
}

// moveTo puts the cursor on text line row at rune col. textarea has no call
// for it, only moves a row at a time that each measure the text, so it goes
// from the nearer end: SetValue leaves the cursor on the last line, where a
// completion or a search match usually is.
func (m *Model) moveTo(row, col int) {
	if last := m.ta.LineCount() - 1; row > last/2 {
		m.ta.MoveToEnd()
		for m.ta.Line() > row {
			r, c := m.ta.Line(), m.ta.Column()
			m.ta.CursorUp()
			if m.ta.Line() == r && m.ta.Column() == c {
				break
			}
		}
	} else {
		m.ta.MoveToBegin()
		for m.ta.Line() < row {
			r, c := m.ta.Line(), m.ta.Column()
			m.ta.CursorDown()
			if m.ta.Line() == r && m.ta.Column() == c {
				break
			}
		}
	}
	m.ta.SetCursorColumn(col)
}

// fillBox scrolls the box so that the cursor is on its last row when the box
// shows rows past the end of the text: up a box's height, which scrolls the
// box onto the cursor's new row, and back down as many rows.
func (m *Model) fillBox() {
	col := m.ta.Column()
	up := 0
	for range m.o.MaxHeight - 1 {
		r, c := m.ta.Line(), m.ta.Column()
		m.ta.CursorUp()
		if m.ta.Line() == r && m.ta.Column() == c {
			break
		}
		up++
	}
	for range up {
		m.ta.CursorDown()
	}
	m.ta.SetCursorColumn(col)
}

// settle ends every change: the box scrolls onto the cursor and is rendered
// once for View. textarea renders its whole height, and each row costs (it
// measures every padded cell), so the box is kept two rows taller than a short
// text rather than at the limit; a text that fills it gets the full limit.
// A box scrolled past the end of a text that shrank is scrolled back, so that
// it stays full.
func (m *Model) settle() {
	if m.moved {
		m.ta.SetHeight(m.ta.Height()) // repositions textarea's viewport on the cursor
		m.moved = false
	}
	box, n, short := m.renderBox()
	if !short && m.ta.Height() < m.o.MaxHeight {
		m.ta.SetHeight(m.o.MaxHeight)
		box, n, short = m.renderBox()
	}
	if short && m.ta.ScrollYOffset() > 0 {
		m.fillBox()
		box, n, short = m.renderBox()
	}
	if h := min(n+2, m.o.MaxHeight); short && h != m.ta.Height() {
		m.ta.SetHeight(h) // the n rows still fit: the rendering stands
	}
	m.memo = &viewMemo{s: box, ok: true}
}

// clean turns CRLF and CR line ends (terminals paste with CR) into LF, which
// textarea would make two lines of, and takes out the fill marker.
func clean(s string) string {
	if strings.ContainsRune(s, '\r') {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	if strings.ContainsRune(s, fillMarker) {
		s = strings.ReplaceAll(s, string(fillMarker), "")
	}
	return s
}

// View is the editor box, then the search line or the completion menu when
// one is active.
func (m Model) View() string {
	var v string
	if m.memo != nil && m.memo.ok {
		v = m.memo.s
	} else {
		v, _, _ = m.renderBox()
		if m.memo != nil {
			*m.memo = viewMemo{s: v, ok: true}
		}
	}
	switch {
	case m.search.active:
		v += "\n" + m.searchView()
	case m.menu.open:
		v += "\n" + m.menuView()
	}
	return v
}

// renderBox is the text's rows in the box with the prompt, how many, and
// whether the box showed rows past the end of the text (which it leaves out).
func (m Model) renderBox() (box string, n int, short bool) {
	rows := strings.Split(m.ta.View(), "\n")
	for n, r := range rows {
		if n > 0 && strings.HasPrefix(r, string(fillMarker)) {
			rows, short = rows[:n], true
			break
		}
	}
	first := m.ta.ScrollYOffset() == 0
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i == 0 && first {
			b.WriteString(m.promptView())
		} else {
			b.WriteString(m.indent)
		}
		b.WriteString(r)
	}
	return b.String(), len(rows), short
}

func (m Model) promptView() string {
	if !m.o.Color || m.o.Prompt == "" {
		return m.o.Prompt
	}
	st := lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true)
	if !m.ta.Focused() {
		st = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	}
	return st.Render(m.o.Prompt)
}
