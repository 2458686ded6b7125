package editor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

var commands = []Completion{
	{Text: "/help", Hint: "show the commands"},
	{Text: "model", Hint: "[provider:]model"}, // without its slash: SlashCompleter adds it
	{Text: "/memo", Hint: "<text> (plugin memo)"},
	{Text: "/new", Hint: "a new session"},
	{Text: "/resume", Hint: "pick a recent session"},
	{Text: "/retry", Hint: "resend the last message"},
}

func texts(items []Completion) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Text)
	}
	return out
}

func TestSlashCompleter(t *testing.T) {
	c := SlashCompleter(commands)
	tests := []struct {
		text   string
		cursor int // -1: the end
		want   []string
	}{
		{text: "/", cursor: -1, want: []string{"/help ", "/memo ", "/model ", "/new ", "/resume ", "/retry "}},
		{text: "/re", cursor: -1, want: []string{"/resume ", "/retry "}},
		{text: "/mo", cursor: -1, want: []string{"/model "}},
		{text: "/new", cursor: -1, want: []string{"/new "}},
		{text: "/help me", cursor: -1},                                     // arguments: nothing to complete
		{text: "hello /he", cursor: -1},                                    // not at the start
		{text: "/rexyz", cursor: 3, want: []string{"/resume ", "/retry "}}, // the word ends at the cursor
		{text: "", cursor: -1},
	}
	for _, tt := range tests {
		cur := tt.cursor
		if cur < 0 {
			cur = len(tt.text)
		}
		items, start := c(tt.text, cur)
		if got := texts(items); !slices.Equal(got, tt.want) || start != 0 {
			t.Errorf("%q at %d: %q from %d, want %q from 0", tt.text, cur, got, start, tt.want)
		}
	}
	if items, _ := c("/mo", 3); items[0].Hint != "[provider:]model" {
		t.Errorf("hint %q, want the argument hint", items[0].Hint)
	}
}

func TestPathCompleter(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src/app", "src/lib", "docs", ".git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"src/main.go", "src/app/run.go", "README.md", ".env", "日本.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("12345"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "docs"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	c := PathCompleter(root)
	tests := []struct {
		text      string
		want      []string
		wantStart int
	}{
		{text: "@", want: []string{"@file:", "@folder:", "@diff ", "@staged ", "@git:"}},
		{text: "look at @f", want: []string{"@file:", "@folder:"}, wantStart: 8},
		{text: "@file:", want: []string{"@file:README.md ", "@file:docs/", "@file:link/", "@file:src/", "@file:日本.txt "}},
		{text: "@file:src/", want: []string{"@file:src/app/", "@file:src/lib/", "@file:src/main.go "}},
		{text: "see @file:src/m", want: []string{"@file:src/main.go "}, wantStart: 4},
		{text: "@file:.e", want: []string{"@file:.env "}},
		{text: "@folder:", want: []string{"@folder:docs/", "@folder:link/", "@folder:src/"}},
		{text: "@folder:src/a", want: []string{"@folder:src/app/"}},
		{text: "@file:" + root + "/RE", want: []string{"@file:" + root + "/README.md "}},
		{text: "@file:nope/"},
		{text: "@diff", want: []string{"@diff "}},
		{text: "email@file:", want: nil},
		{text: "日本 @fi", want: []string{"@file:"}, wantStart: len("日本 ")},
	}
	for _, tt := range tests {
		items, start := c(tt.text, len(tt.text))
		if got := texts(items); !slices.Equal(got, tt.want) || (len(items) > 0 && start != tt.wantStart) {
			t.Errorf("%q: %q from %d, want %q from %d", tt.text, got, start, tt.want, tt.wantStart)
		}
	}
	items, _ := c("@file:R", 7)
	if len(items) != 1 || items[0].Hint != "5 B" {
		t.Errorf("file hint: %+v, want its size", items)
	}
}

func TestChain(t *testing.T) {
	c := Chain(nil, SlashCompleter(commands), PathCompleter(t.TempDir()))
	if items, _ := c("/he", 3); !slices.Equal(texts(items), []string{"/help "}) {
		t.Errorf("slash: %q", texts(items))
	}
	if items, start := c("x @st", 5); !slices.Equal(texts(items), []string{"@staged "}) || start != 2 {
		t.Errorf("reference: %q from %d", texts(items), start)
	}
	if items, _ := c("plain", 5); items != nil {
		t.Errorf("plain text: %q", texts(items))
	}
}

func TestCompletionMenu(t *testing.T) {
	tests := []struct {
		name string
		keys []tea.Msg
		want string // value with | at the cursor
		open bool
	}{
		{name: "one candidate completes", keys: in("/he", kTab), want: "/help |"},
		{name: "several insert their common part and open the menu", keys: in("/r", kTab), want: "/re|", open: true},
		{name: "tab moves and inserts", keys: in("/r", kTab, kTab), want: "/resume |", open: true},
		{name: "tab again moves on", keys: in("/r", kTab, kTab, kTab), want: "/retry |", open: true},
		{name: "tab wraps around", keys: in("/r", kTab, kTab, kTab, kTab), want: "/resume |", open: true},
		{name: "shift-tab moves back", keys: in("/r", kTab, kShiftTab), want: "/retry |", open: true},
		{name: "arrows move", keys: in("/r", kTab, kDown, kDown, kUp), want: "/resume |", open: true},
		{name: "enter accepts the choice", keys: in("/r", kTab, kTab, kTab, kEnter), want: "/retry |"},
		{name: "enter with no choice takes the first", keys: in("/r", kTab, kEnter), want: "/resume |"},
		{name: "esc closes and restores the word", keys: in("/r", kTab, kTab, kEsc), want: "/r|"},
		{name: "typing narrows the menu", keys: in("/", kTab, "m"), want: "/m|", open: true},
		{name: "typing to one candidate closes it", keys: in("/", kTab, "h"), want: "/h|"},
		{name: "other keys close it and act", keys: in("/r", kTab, kTab, ctrl('a'), ">"), want: ">|/resume "},
		{name: "nothing to complete", keys: in("hello", kTab), want: "hello|"},
		{name: "completes mid-text", keys: in("/he tail", ctrl('a'), kRight, kRight, kRight, kTab), want: "/help | tail"},
		{name: "a reference after text", keys: in("read @file:RE", kTab), want: "read @file:README.md |"},
		{name: "a folder then into it", keys: in("@folder:s", kTab, kTab), want: "@folder:src/app/|"},
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Options{Complete: Chain(SlashCompleter(commands), PathCompleter(root)), Prompt: "> ", Width: 50})
			m, msgs := run(m, tt.keys)
			if got := cursorAt(m); got != tt.want {
				t.Errorf("value %q, want %q", got, tt.want)
			}
			if m.MenuOpen() != tt.open {
				t.Errorf("menu open %v, want %v\n%s", m.MenuOpen(), tt.open, m.View())
			}
			if len(submitted(msgs)) != 0 {
				t.Errorf("sent %q: completion keys send nothing", submitted(msgs))
			}
		})
	}
}

// Hints come from plugins: what they carry cannot reach the terminal.
func TestMenuSanitises(t *testing.T) {
	c := SlashCompleter([]Completion{{Text: "/evil", Hint: "\x1b]0;owned\x07 \x1b[2J"}, {Text: "/ever\x1b[31m", Hint: "ok"}})
	m := New(Options{Complete: c, Width: 60})
	m, _ = run(m, in("/ev", kTab))
	v := m.View()
	if strings.ContainsRune(v, 0x07) || strings.Contains(v, "\x1b]") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x1b[31m") {
		t.Errorf("menu passes a plugin's escape sequences: %q", v)
	}
	if !strings.Contains(v, `\x1b]0;owned\x07`) {
		t.Errorf("menu should show the hint escaped: %q", v)
	}
}

func TestMenuScrolls(t *testing.T) {
	var many []Completion
	for _, r := range "abcdefghij" {
		many = append(many, Completion{Text: "/" + string(r)})
	}
	m := New(Options{Complete: SlashCompleter(many), Width: 40})
	m, _ = run(m, in("/", kTab))
	if v := m.View(); !strings.Contains(v, "1–6 of 10") || strings.Contains(v, "/g") {
		t.Errorf("first page:\n%s", v)
	}
	for range 8 {
		m, _ = run(m, in(kTab))
	}
	if v := m.View(); !strings.Contains(v, "› /h") || !strings.Contains(v, "3–8 of 10") {
		t.Errorf("after moving to the 8th:\n%s", v)
	}
}
