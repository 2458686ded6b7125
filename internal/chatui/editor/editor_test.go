package editor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

var (
	kEnter      = tea.KeyPressMsg{Code: tea.KeyEnter}
	kAltEnter   = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	kShiftEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
	kUp         = tea.KeyPressMsg{Code: tea.KeyUp}
	kDown       = tea.KeyPressMsg{Code: tea.KeyDown}
	kLeft       = tea.KeyPressMsg{Code: tea.KeyLeft}
	kRight      = tea.KeyPressMsg{Code: tea.KeyRight}
	kHome       = tea.KeyPressMsg{Code: tea.KeyHome}
	kEnd        = tea.KeyPressMsg{Code: tea.KeyEnd}
	kCtrlLeft   = tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModCtrl}
	kCtrlRight  = tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModCtrl}
	kTab        = tea.KeyPressMsg{Code: tea.KeyTab}
	kShiftTab   = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	kEsc        = tea.KeyPressMsg{Code: tea.KeyEscape}
	kBackspace  = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }
func alt(r rune) tea.KeyPressMsg  { return tea.KeyPressMsg{Code: r, Mod: tea.ModAlt} }

// typ is the key presses that type s.
func typ(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// in flattens key presses and key lists into one list.
func in(parts ...any) []tea.Msg {
	var out []tea.Msg
	for _, p := range parts {
		switch p := p.(type) {
		case []tea.Msg:
			out = append(out, p...)
		case string:
			out = append(out, typ(p)...)
		case tea.Msg:
			out = append(out, p)
		}
	}
	return out
}

// run feeds msgs to m and returns it with the messages its commands produced.
func run(m Model, msgs []tea.Msg) (Model, []tea.Msg) {
	var got []tea.Msg
	for _, msg := range msgs {
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		got = append(got, runCmd(cmd)...)
	}
	return m, got
}

func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	case nil:
		return nil
	default:
		return []tea.Msg{msg}
	}
}

func submitted(msgs []tea.Msg) []string {
	var out []string
	for _, m := range msgs {
		if s, ok := m.(SubmitMsg); ok {
			out = append(out, s.Text)
		}
	}
	return out
}

func newHistory(t *testing.T, entries ...string) *History {
	t.Helper()
	h, err := OpenHistory(filepath.Join(t.TempDir(), "chat_history"), 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// cursorAt renders the value with a | where the cursor is.
func cursorAt(m Model) string {
	v := m.Value()
	o := m.cursorOffset()
	return v[:o] + "|" + v[o:]
}

func TestEditing(t *testing.T) {
	tests := []struct {
		name    string
		keys    []tea.Msg
		want    string // value with | at the cursor
		sent    []string
		history []string
	}{
		{name: "typing", keys: in("hello"), want: "hello|"},
		{name: "left and insert", keys: in("helo", kLeft, "l"), want: "hell|o"},
		{name: "ctrl-a and ctrl-e", keys: in("abc", ctrl('a'), "x", ctrl('e'), "y"), want: "xabcy|"},
		{name: "home and end", keys: in("abc", kHome, "<", kEnd, ">"), want: "<abc>|"},
		{name: "ctrl-u kills to line start", keys: in("one two", kLeft, kLeft, ctrl('u')), want: "|wo"},
		{name: "ctrl-k kills to line end", keys: in("one two", ctrl('a'), kRight, ctrl('k')), want: "o|"},
		{name: "ctrl-w kills a word", keys: in("one two three", ctrl('w')), want: "one two |"},
		{name: "alt-b and alt-f", keys: in("one two three", alt('b'), alt('b'), "_", alt('f'), "^"), want: "one _two^| three"},
		{name: "ctrl-left and ctrl-right", keys: in("one two three", kCtrlLeft, kCtrlLeft, kCtrlRight, "!"), want: "one two!| three"},
		{name: "ctrl-b and ctrl-f", keys: in("ab", ctrl('b'), ctrl('b'), ctrl('f'), "-"), want: "a-|b"},
		{name: "backspace", keys: in("abc", kBackspace), want: "ab|"},
		{name: "ctrl-c and ctrl-d are the chat's", keys: in("abc", ctrl('c'), ctrl('d')), want: "abc|"},
		{name: "alt-enter breaks the line", keys: in("one", kAltEnter, "two"), want: "one\ntwo|"},
		{name: "shift-enter breaks the line", keys: in("one", kShiftEnter, "two"), want: "one\ntwo|"},
		{name: "ctrl-j breaks the line", keys: in("one", ctrl('j'), "two"), want: "one\ntwo|"},
		{name: "backslash enter breaks the line", keys: in(`one\`, kEnter, "two"), want: "one\ntwo|"},
		{name: "up and down move inside the text", keys: in("one", kAltEnter, "two", kUp, "!", kDown, "?"), want: "one!\ntwo?|"},
		{name: "enter sends and empties", keys: in("hi there", kEnter), want: "|", sent: []string{"hi there"}, history: []string{"hi there"}},
		{name: "enter sends multi-line", keys: in("a", kAltEnter, "b", kEnter), want: "|", sent: []string{"a\nb"}, history: []string{"a\nb"}},
		{name: "enter on blank sends nothing", keys: in("  ", kEnter), want: "  |"},
		{name: "wide characters", keys: in("日本語", kLeft, "x", kHome, "😀"), want: "😀|日本x語"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(t)
			m := New(Options{History: h, Prompt: "> ", Width: 40})
			m, msgs := run(m, tt.keys)
			if got := cursorAt(m); got != tt.want {
				t.Errorf("value %q, want %q", got, tt.want)
			}
			if got := submitted(msgs); !slices.Equal(got, tt.sent) {
				t.Errorf("sent %q, want %q", got, tt.sent)
			}
			if got := h.Entries(); !slices.Equal(got, tt.history) {
				t.Errorf("history %q, want %q", got, tt.history)
			}
		})
	}
}

func TestGraphemeClusters(t *testing.T) {
	const (
		thumb  = "👍🏽"              // emoji and skin tone
		flag   = "🇫🇷"              // two regional indicators
		family = "👨\u200d👩\u200d👧" // ZWJ sequence
		accent = "e\u0301"         // e and a combining acute
	)
	tests := []struct {
		name string
		keys []tea.Msg
		want string
	}{
		{name: "left over a skin tone", keys: in("a"+thumb, kLeft, "|"), want: "a|" + thumb},
		{name: "left over a flag", keys: in(flag+flag, kLeft, "|"), want: flag + "|" + flag},
		{name: "left over a family", keys: in("x"+family+"y", kLeft, kLeft, "|"), want: "x|" + family + "y"},
		{name: "right over a family", keys: in(family+"y", kHome, kRight, "|"), want: family + "|y"},
		{name: "left over an accent", keys: in("d"+accent, kLeft, "|"), want: "d|" + accent},
		{name: "backspace deletes the whole emoji", keys: in("a"+thumb, kBackspace), want: "a"},
		{name: "backspace deletes the whole family", keys: in("a"+family, kBackspace), want: "a"},
		{name: "delete deletes the whole flag", keys: in(flag+"b", kHome, tea.KeyPressMsg{Code: tea.KeyDelete}), want: "b"},
		{name: "up lands after a cluster", keys: in(thumb+thumb, kAltEnter, "abc", kUp, "|"), want: thumb + "|" + thumb + "\nabc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Width: 40})
			m, _ = run(m, tt.keys)
			if m.Value() != tt.want {
				t.Errorf("value %q, want %q", m.Value(), tt.want)
			}
		})
	}
	// The real cursor sits after the emoji's two columns.
	m := New(Options{Prompt: "> ", Width: 40, RealCursor: true})
	m, _ = run(m, in(thumb+"a", kLeft, kLeft))
	if c := m.Cursor(); c == nil || c.X != 2 {
		t.Errorf("cursor %+v, want at column 2 before the emoji", c)
	}
}

// Messages that are not keys or pastes leave the editor as it was.
func TestOtherMessagesIgnored(t *testing.T) {
	m := New(Options{Prompt: "> ", Width: 40})
	m, _ = run(m, in("abc"))
	before := m.View()
	m, msgs := run(m, in(tea.WindowSizeMsg{Width: 10, Height: 5}, tea.MouseWheelMsg{Button: tea.MouseWheelDown}, struct{}{}))
	if m.View() != before || len(msgs) != 0 {
		t.Errorf("view %q, messages %v, want %q and none", m.View(), msgs, before)
	}
	m.Blur()
	m, _ = run(m, in("x", tea.PasteMsg{Content: "y"}))
	if m.Value() != "abc" {
		t.Errorf("a blurred editor took input: %q", m.Value())
	}
	m.Focus()
	m, _ = run(m, in("d"))
	if m.Value() != "abcd" {
		t.Errorf("focused again: %q", m.Value())
	}
}

func TestSetPromptAndCompleter(t *testing.T) {
	m := New(Options{Prompt: "> ", Width: 20})
	m, _ = run(m, in("/he", kTab))
	if m.Value() != "/he" {
		t.Fatalf("no completer: %q", m.Value())
	}
	m.SetCompleter(SlashCompleter(commands))
	m, _ = run(m, in(kTab))
	if m.Value() != "/help " {
		t.Errorf("after SetCompleter: %q", m.Value())
	}
	m.SetPrompt("busy ❯ ")
	m, _ = run(m, in(strings.Repeat("x", 12)))
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "busy ❯ /help ") || !strings.HasPrefix(lines[1], "       x") {
		t.Errorf("view after SetPrompt:\n%s", m.View())
	}
}

func TestCtrlLClearsScreen(t *testing.T) {
	m := New(Options{Width: 40})
	m, msgs := run(m, in("abc", ctrl('l')))
	if len(msgs) != 1 || msgs[0] != (ClearScreenMsg{}) {
		t.Fatalf("messages %#v, want one ClearScreenMsg", msgs)
	}
	if m.Value() != "abc" {
		t.Errorf("value %q changed", m.Value())
	}
}

func TestPaste(t *testing.T) {
	long := strings.Repeat("0123456789", 1000)
	tests := []struct {
		name, paste, want string
	}{
		{name: "10,000 characters", paste: long, want: long},
		{name: "three lines", paste: "first\nsecond\nthird", want: "first\nsecond\nthird"},
		{name: "CRLF line ends", paste: "first\r\nsecond\rthird", want: "first\nsecond\nthird"},
		{name: "a long multi-line paste", paste: strings.Repeat(long[:99]+"\n", 200), want: strings.Repeat(long[:99]+"\n", 200)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Prompt: "> ", Width: 60})
			m, msgs := run(m, in("> ", tea.PasteMsg{Content: tt.paste}, kEnter))
			if got := submitted(msgs); len(got) != 1 || got[0] != "> "+tt.want {
				t.Fatalf("sent %d messages (%d bytes), want one of %d bytes", len(got), len(strings.Join(got, "")), len(tt.want)+2)
			}
			if m.Value() != "" {
				t.Errorf("left %q behind", m.Value())
			}
		})
	}
}

// textarea holds 10,000 lines: a longer paste is cut there, and said so.
func TestPasteOverTheLineLimit(t *testing.T) {
	m := New(Options{Width: 60})
	m, msgs := run(m, in(tea.PasteMsg{Content: strings.Repeat("l\n", 10499) + "l"}))
	if got := strings.Count(m.Value(), "\n") + 1; got != 10000 {
		t.Errorf("%d lines kept, want 10000", got)
	}
	if len(msgs) != 1 || msgs[0] != (PasteCutMsg{Lines: 10500, Kept: 10000}) {
		t.Errorf("messages %#v, want a PasteCutMsg", msgs)
	}
	m.Reset()
	if _, msgs := run(m, in(tea.PasteMsg{Content: strings.Repeat("l\n", 9999)})); len(msgs) != 0 {
		t.Errorf("a paste of 10,000 lines: messages %#v, want none", msgs)
	}
}

func TestHistoryWalk(t *testing.T) {
	tests := []struct {
		name string
		keys []tea.Msg
		want string
	}{
		{name: "up shows the newest", keys: in(kUp), want: "third|"},
		{name: "up twice", keys: in(kUp, kUp), want: "two|\nlines"},
		{name: "up on the first line of a multi-line entry goes on", keys: in(kUp, kUp, kUp), want: "first|"},
		{name: "up stops at the oldest", keys: in(kUp, kUp, kUp, kUp), want: "first|"},
		{name: "down comes back with the cursor at the end", keys: in(kUp, kUp, kUp, kDown), want: "two\nlines|"},
		{name: "down walks the lines of an entry first", keys: in(kUp, kUp, kDown), want: "two\nlin|es"},
		{name: "down past the newest restores the draft", keys: in("dra", kUp, kUp, kDown, kDown, kDown), want: "dra|"},
		{name: "ctrl-p and ctrl-n walk too", keys: in(ctrl('p'), ctrl('p'), ctrl('n'), ctrl('n')), want: "third|"},
		{name: "down without walking does nothing", keys: in("x", kDown), want: "x|"},
		{name: "up inside a multi-line draft moves the cursor", keys: in("a", kAltEnter, "b", kUp), want: "a|\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{History: newHistory(t, "first", "two\nlines", "third"), Prompt: "> ", Width: 40})
			m, _ = run(m, tt.keys)
			if got := cursorAt(m); got != tt.want {
				t.Errorf("value %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReverseSearch(t *testing.T) {
	entries := []string{"git status", "make test", "git commit -m wip", "echo hello"}
	tests := []struct {
		name      string
		keys      []tea.Msg
		want      string
		searching bool
		sent      []string
	}{
		{name: "finds the newest match", keys: in("draft", ctrl('r'), "git"), want: "git commit -m wip", searching: true},
		{name: "ctrl-r again finds an older one", keys: in(ctrl('r'), "git", ctrl('r')), want: "git status", searching: true},
		{name: "enter accepts without sending", keys: in(ctrl('r'), "make", kEnter), want: "make test"},
		{name: "enter after accepting sends", keys: in(ctrl('r'), "make", kEnter, kEnter), want: "", sent: []string{"make test"}},
		{name: "esc cancels", keys: in("draft", ctrl('r'), "git", kEsc), want: "draft"},
		{name: "ctrl-g cancels", keys: in("draft", ctrl('r'), "echo", ctrl('g')), want: "draft"},
		{name: "ignores case", keys: in(ctrl('r'), "HELLO"), want: "echo hello", searching: true},
		{name: "no match keeps the last", keys: in(ctrl('r'), "gitx"), want: "git commit -m wip", searching: true},
		{name: "backspace widens again", keys: in(ctrl('r'), "maker", kBackspace), want: "make test", searching: true},
		{name: "another key accepts and acts", keys: in(ctrl('r'), "make", ctrl('a'), ">"), want: ">make test"},
		{name: "paste extends the query", keys: in(ctrl('r'), tea.PasteMsg{Content: "stat"}), want: "git status", searching: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{History: newHistory(t, entries...), Prompt: "> ", Width: 60})
			m, msgs := run(m, tt.keys)
			if m.Value() != tt.want {
				t.Errorf("value %q, want %q", m.Value(), tt.want)
			}
			if m.Searching() != tt.searching {
				t.Errorf("searching %v, want %v", m.Searching(), tt.searching)
			}
			if got := submitted(msgs); !slices.Equal(got, tt.sent) {
				t.Errorf("sent %q, want %q", got, tt.sent)
			}
		})
	}
}

func TestCursorWideCharacters(t *testing.T) {
	tests := []struct {
		name  string
		keys  []tea.Msg
		x, y  int
		width int
	}{
		{name: "after ascii", keys: in("abc"), x: 5, y: 0, width: 40},
		{name: "after CJK", keys: in("日本語"), x: 2 + 6, y: 0, width: 40},
		{name: "between CJK", keys: in("日本語", kLeft), x: 2 + 4, y: 0, width: 40},
		{name: "after emoji", keys: in("😀😀x"), x: 2 + 5, y: 0, width: 40},
		{name: "second line", keys: in("日本", kAltEnter, "語x"), x: 2 + 3, y: 1, width: 40},
		{name: "wrapped CJK", keys: in(strings.Repeat("語", 12)), x: 2 + 2*(12-9), y: 1, width: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Prompt: "> ", Width: tt.width, RealCursor: true})
			m, _ = run(m, tt.keys)
			c := m.Cursor()
			if c == nil {
				t.Fatal("no cursor")
			}
			if c.X != tt.x || c.Y != tt.y {
				t.Errorf("cursor at %d,%d, want %d,%d\n%s", c.X, c.Y, tt.x, tt.y, m.View())
			}
		})
	}
}

func TestSetWidthRewraps(t *testing.T) {
	m := New(Options{Prompt: "> ", Width: 80})
	m, _ = run(m, in(strings.Repeat("word ", 20)))
	if h := m.Height(); h != 2 {
		t.Fatalf("height %d at 80 columns, want 2\n%s", h, m.View())
	}
	m.SetWidth(40)
	if h := m.Height(); h != 3 {
		t.Errorf("height %d at 40 columns, want 3\n%s", h, m.View())
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %q is %d columns wide at 40", l, w)
		}
	}
}

func TestGrowsThenScrolls(t *testing.T) {
	m := New(Options{Prompt: "> ", Width: 40, MaxHeight: 4})
	var keys []tea.Msg
	for i := range 10 {
		if i > 0 {
			keys = append(keys, kAltEnter)
		}
		keys = append(keys, typ(string(rune('a'+i)))...)
	}
	for i := range 10 {
		m, _ = run(m, keys[:2*i+1])
		if want := min(i+1, 4); m.Height() != want {
			t.Fatalf("after %d lines height %d, want %d", i+1, m.Height(), want)
		}
		m.Reset()
	}
	m, _ = run(m, keys)
	if v := m.View(); !strings.Contains(v, "j") || strings.Contains(v, "a") || m.Height() != 4 {
		t.Errorf("scrolled view should show the last 4 lines, not the first:\n%s", v)
	}
	for range 9 {
		m, _ = run(m, in(kUp))
	}
	if v := m.View(); !strings.Contains(v, "a") || strings.Contains(v, "e") {
		t.Errorf("after going up to the first line the view should show the first 4:\n%s", v)
	}
	m, _ = run(m, in(kDown, kDown))
	if v := m.View(); !strings.Contains(v, "a") {
		t.Errorf("moving inside the window should not scroll:\n%s", v)
	}
}

// A box scrolled to the end of a text that then shrinks stays full.
func TestShrinkKeepsTheBoxFull(t *testing.T) {
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	m := New(Options{Prompt: "> ", Width: 40, MaxHeight: 5})
	m, _ = run(m, in(tea.PasteMsg{Content: strings.Join(lines, "\n")}))
	for range 3 * len("line 19\n") {
		m, _ = run(m, in(kBackspace))
	}
	if v := m.View(); m.Height() != 5 || !strings.Contains(v, "line 16") || !strings.Contains(v, "line 12") {
		t.Errorf("after deleting the last lines the box should show lines 12-16:\n%s", v)
	}
	m.SetValue("short")
	if v := m.View(); m.Height() != 1 || !strings.HasPrefix(v, "> short") {
		t.Errorf("SetValue of a short text: %q", v)
	}
}

func TestRealCursorWhenScrolled(t *testing.T) {
	m := New(Options{Prompt: "> ", Width: 40, MaxHeight: 3, RealCursor: true})
	m, _ = run(m, in(tea.PasteMsg{Content: "1\n2\n3\n4\n5\n6"}))
	if c := m.Cursor(); c == nil || c.Y != 2 || c.X != 3 {
		t.Fatalf("cursor %+v, want on the last row of the box", c)
	}
	if strings.Contains(m.View(), "\x1b[7m") {
		t.Errorf("a real cursor leaves the virtual one out: %q", m.View())
	}
	m, _ = run(m, in(kUp, kUp, kUp, kUp, kUp))
	if c := m.Cursor(); c == nil || c.Y != 0 {
		t.Fatalf("cursor %+v, want on the first row of the box", c)
	}
	if v := m.View(); !strings.HasPrefix(v, "> 1") {
		t.Errorf("view %q should start with the first line", v)
	}
}

func TestViews(t *testing.T) {
	h := []string{"first", "make test", "git status"}
	slash := SlashCompleter([]Completion{
		{Text: "/help", Hint: "show the commands"}, {Text: "/model", Hint: "[provider:]model"},
		{Text: "/memo", Hint: "<text> (plugin memo)"}, {Text: "/new", Hint: "a new session"},
	})
	tests := []struct {
		name      string
		color     bool
		blur      bool
		width     int
		maxHeight int
		keys      []tea.Msg
	}{
		{name: "empty", width: 30},
		{name: "typed", width: 30, keys: in("hello")},
		{name: "wrapped", width: 30, keys: in(strings.Repeat("wrap me ", 8))},
		{name: "multiline", width: 30, keys: in("one", kAltEnter, "two", kAltEnter, "three")},
		{name: "wide", width: 20, keys: in("日本語のテキストと絵文字😀が混ざる")},
		{name: "search", width: 60, keys: in(ctrl('r'), "make")},
		{name: "search failing", width: 60, keys: in(ctrl('r'), "zzz")},
		{name: "menu", width: 40, keys: in("/m", kTab)},
		{name: "menu moved", width: 40, keys: in("/", kTab, kTab, kTab)},
		{name: "color typed", color: true, width: 30, keys: in("hello", kLeft)},
		{name: "color menu", color: true, width: 40, keys: in("/", kTab, kTab)},
		{name: "color search", color: true, width: 60, keys: in(ctrl('r'), "git")},
		{name: "search with help", width: 80, keys: in(ctrl('r'), "st")},
		{name: "scrolled to the end", width: 30, maxHeight: 3, keys: in(tea.PasteMsg{Content: "one\ntwo\nthree\nfour\nfive"})},
		{name: "scrolled to the top", width: 30, maxHeight: 3, keys: in(tea.PasteMsg{Content: "one\ntwo\nthree\nfour\nfive"}, kUp, kUp, kUp, kUp)},
		{name: "blurred", width: 30, blur: true, keys: in("not focused")},
		{name: "color blurred", color: true, width: 30, blur: true, keys: in("not focused")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{History: newHistory(t, h...), Complete: slash, Prompt: "❯ ", Width: tt.width, Color: tt.color, MaxHeight: tt.maxHeight})
			m, _ = run(m, tt.keys)
			if tt.blur {
				m.Blur()
			}
			golden.RequireEqual(t, m.View())
		})
	}
}
