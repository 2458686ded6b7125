package pluginsui

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden screens")

// Keys as the terminal reader delivers them.
var (
	kUp    = tea.KeyPressMsg{Code: tea.KeyUp}
	kDown  = tea.KeyPressMsg{Code: tea.KeyDown}
	kJ     = tea.KeyPressMsg{Code: 'j', Text: "j"}
	kK     = tea.KeyPressMsg{Code: 'k', Text: "k"}
	kQ     = tea.KeyPressMsg{Code: 'q', Text: "q"}
	kF     = tea.KeyPressMsg{Code: 'f', Text: "f"}
	kB     = tea.KeyPressMsg{Code: 'b', Text: "b"}
	kSpace = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	kEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	kEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	kPgDn  = tea.KeyPressMsg{Code: tea.KeyPgDown}
	kPgUp  = tea.KeyPressMsg{Code: tea.KeyPgUp}
	kHome  = tea.KeyPressMsg{Code: tea.KeyHome}
	kEnd   = tea.KeyPressMsg{Code: tea.KeyEnd}
	kCtrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
)

func samplePlugins() []Plugin {
	return []Plugin{
		{Key: "disk-cleanup", Name: "disk-cleanup", Description: "Auto-cleanup of ephemeral files", Bundled: true},
		{Key: "my-tool", Name: "my-tool", Description: "Custom search tool", Checked: true},
		{Key: "observability/trace", Name: "trace"},
	}
}

func sampleSlots() []Slot {
	return []Slot{
		{Title: "Memory Provider", DefaultLabel: "built-in", DefaultValue: "", Current: "",
			Choices: []Choice{{Name: "sqlmem", Description: "SQLite recall"}, {Name: "bare"}}},
		{Title: "Context Engine", DefaultLabel: "compressor", DefaultValue: "compressor", Current: "compressor"},
	}
}

// saves records what a SaveFunc was asked to write; fail makes it refuse.
type saves struct {
	got  []string
	fail error
}

func (s *saves) save(slot int, value string) error {
	if s.fail != nil {
		return s.fail
	}
	s.got = append(s.got, fmt.Sprintf("%d=%q", slot, value))
	return nil
}

// press delivers msgs in order and runs the commands they return, as the
// program would, feeding their messages back.
func press(m *Model, msgs ...tea.Msg) (quit bool) {
	queue := append([]tea.Msg{}, msgs...)
	for len(queue) > 0 {
		msg := queue[0]
		queue = queue[1:]
		_, cmd := m.Update(msg)
		if cmd == nil {
			continue
		}
		switch out := cmd().(type) {
		case tea.QuitMsg:
			quit = true
		case nil:
		default:
			queue = append([]tea.Msg{out}, queue...)
		}
	}
	return quit
}

// screen is the view as the terminal shows it: styles off, lines as they are.
func screen(m *Model) string { return ansi.Strip(m.View().Content) }

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/pluginsui -update)", err)
	}
	if got != string(want) {
		t.Errorf("screen %s:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		name    string
		size    [2]int
		keys    []tea.Msg
		cursor  int
		checked []bool
		outcome Outcome
		saved   []string
		golden  string
	}{
		{name: "opens on the first row", checked: []bool{false, true, false}, golden: "initial"},
		{name: "down and space toggle", keys: []tea.Msg{kDown, kSpace}, cursor: 1, checked: []bool{false, false, false}},
		{name: "j and k move", keys: []tea.Msg{kJ, kJ, kK}, cursor: 1, checked: []bool{false, true, false}},
		{name: "space twice toggles back", keys: []tea.Msg{kSpace, kSpace}, checked: []bool{false, true, false}},
		{name: "up wraps to the last row", keys: []tea.Msg{kUp}, cursor: 4, checked: []bool{false, true, false}, golden: "wrapped"},
		{name: "down wraps to the first row", keys: []tea.Msg{kEnd, kDown}, cursor: 0, checked: []bool{false, true, false}},
		{name: "home and end", keys: []tea.Msg{kEnd, kUp, kHome}, cursor: 0, checked: []bool{false, true, false}},
		{name: "page down stops at the end", size: [2]int{80, 7}, keys: []tea.Msg{kPgDn, kPgDn, kPgDn}, cursor: 4, checked: []bool{false, true, false}},
		{name: "page is rows less 5", size: [2]int{80, 7}, keys: []tea.Msg{kPgDn}, cursor: 2, checked: []bool{false, true, false}},
		{name: "f and b page", size: [2]int{80, 7}, keys: []tea.Msg{kF, kF, kB}, cursor: 2, checked: []bool{false, true, false}},
		{name: "page up stops at the top", size: [2]int{80, 7}, keys: []tea.Msg{kEnd, kPgUp, kPgUp, kPgUp}, cursor: 0, checked: []bool{false, true, false}},
		{name: "enter on a plugin confirms", keys: []tea.Msg{kSpace, kEnter}, checked: []bool{true, true, false}, outcome: Done},
		{name: "esc is done, changes kept", keys: []tea.Msg{kJ, kJ, kSpace, kEsc}, cursor: 2, checked: []bool{false, true, true}, outcome: Done},
		{name: "q is done", keys: []tea.Msg{kQ}, checked: []bool{false, true, false}, outcome: Done},
		{name: "ctrl-c interrupts", keys: []tea.Msg{kSpace, kCtrlC}, checked: []bool{true, true, false}, outcome: Interrupted},
		{name: "space on a provider row opens its picker", keys: []tea.Msg{kEnd, kUp, kSpace}, cursor: 3, checked: []bool{false, true, false}, golden: "memory-picker"},
		{name: "enter in the picker saves the pick", keys: []tea.Msg{kEnd, kUp, kEnter, kDown, kEnter}, cursor: 3, checked: []bool{false, true, false}, saved: []string{`0="sqlmem"`}, golden: "memory-picked"},
		{name: "esc in the picker keeps the value", keys: []tea.Msg{kEnd, kUp, kEnter, kDown, kEsc}, cursor: 3, checked: []bool{false, true, false}},
		{name: "the same value is not written", keys: []tea.Msg{kEnd, kEnter, kEnter}, cursor: 4, checked: []bool{false, true, false}},
		{name: "picker wraps", keys: []tea.Msg{kEnd, kUp, kEnter, kUp, kEnter}, cursor: 3, checked: []bool{false, true, false}, saved: []string{`0="bare"`}},
		{name: "picker q cancels, screen stays", keys: []tea.Msg{kEnd, kEnter, kQ}, cursor: 4, checked: []bool{false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s saves
			m := New(samplePlugins(), sampleSlots(), s.save)
			size := tt.size
			if size == [2]int{} {
				size = [2]int{80, 24}
			}
			quit := press(m, append([]tea.Msg{tea.WindowSizeMsg{Width: size[0], Height: size[1]}}, tt.keys...)...)
			if m.Cursor() != tt.cursor {
				t.Errorf("cursor %d, want %d", m.Cursor(), tt.cursor)
			}
			if got := m.Checked(); !slices.Equal(got, tt.checked) {
				t.Errorf("checked %v, want %v", got, tt.checked)
			}
			if m.Outcome() != tt.outcome || quit != (tt.outcome != Running) {
				t.Errorf("outcome %v (quit %v), want %v", m.Outcome(), quit, tt.outcome)
			}
			if !slices.Equal(s.got, tt.saved) {
				t.Errorf("saved %v, want %v", s.got, tt.saved)
			}
			if m.ProvidersChanged() != (len(tt.saved) > 0) {
				t.Errorf("providers changed %v after saves %v", m.ProvidersChanged(), s.got)
			}
			if tt.golden != "" {
				golden(t, tt.golden, screen(m))
			}
		})
	}
}

// A save that fails says so on the screen and leaves the row as it was.
func TestSaveFails(t *testing.T) {
	s := saves{fail: errors.New("config.yaml is locked\x1b[2J")}
	m := New(samplePlugins(), sampleSlots(), s.save)
	press(m, tea.WindowSizeMsg{Width: 100, Height: 24}, kEnd, kUp, kEnter, kDown, kEnter)
	got := screen(m)
	if !strings.Contains(got, `Could not save Memory Provider: config.yaml is locked\x1b[2J`) {
		t.Errorf("no error line (sanitised):\n%s", got)
	}
	if m.Slots()[0].Current != "" || m.ProvidersChanged() {
		t.Errorf("slot %+v changed %v after a failed save", m.Slots()[0], m.ProvidersChanged())
	}
	if !strings.Contains(got, "Memory Provider          ▸ built-in") {
		t.Errorf("row changed:\n%s", got)
	}
}

func TestPickerItems(t *testing.T) {
	tests := []struct {
		name   string
		slot   Slot
		labels []string
		values []string
		cursor int
	}{
		{
			name:   "default first, then the choices",
			slot:   sampleSlots()[0],
			labels: []string{"built-in (default)", "sqlmem — SQLite recall", "bare"},
			values: []string{"", "sqlmem", "bare"},
		},
		{
			name:   "the current value is under the cursor",
			slot:   Slot{Title: "Memory Provider", DefaultLabel: "built-in", Current: "bare", Choices: []Choice{{Name: "sqlmem"}, {Name: "bare"}}},
			labels: []string{"built-in (default)", "sqlmem", "bare"},
			values: []string{"", "sqlmem", "bare"},
			cursor: 2,
		},
		{
			name:   "a value nobody offers is not found",
			slot:   Slot{Title: "Memory Provider", DefaultLabel: "built-in", Current: "honcho"},
			labels: []string{"built-in (default)", "honcho (not found)"},
			values: []string{"", "honcho"},
			cursor: 1,
		},
		{
			name:   "a choice named like the default is one item",
			slot:   Slot{Title: "Context Engine", DefaultLabel: "compressor", DefaultValue: "compressor", Current: "compressor", Choices: []Choice{{Name: "compressor", Description: "shadow"}, {Name: "lcm", Description: "installed plugin"}}},
			labels: []string{"compressor (default)", "lcm — installed plugin"},
			values: []string{"compressor", "lcm"},
		},
		{
			name:   "names and descriptions are sanitised",
			slot:   Slot{Title: "Memory Provider", DefaultLabel: "built-in", Current: "\x1b]0;x\a", Choices: []Choice{{Name: "ev\u202eil", Description: "line\nbreak\x1b[31m"}}},
			labels: []string{"built-in (default)", `ev\u202eil — line\nbreak\x1b[31m`, `\x1b]0;x\x07 (not found)`},
			values: []string{"", "ev\u202eil", "\x1b]0;x\a"},
			cursor: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPicker(0, tt.slot)
			if !slices.Equal(p.labels, tt.labels) || !slices.Equal(p.values, tt.values) {
				t.Errorf("labels %q values %q,\nwant %q %q", p.labels, p.values, tt.labels, tt.values)
			}
			if p.cursor != tt.cursor || p.selected != tt.cursor {
				t.Errorf("cursor %d selected %d, want %d", p.cursor, p.selected, tt.cursor)
			}
		})
	}
}

// What a plugin says about itself cannot drive the terminal: no escape of its
// own reaches the screen, only the screen's styles.
func TestPluginTextIsSanitised(t *testing.T) {
	hostile := []Plugin{{Key: "evil", Name: "evil\x1b]0;owned\a", Description: "clear\x1b[2J\r\nfake row \u202e"}}
	m := New(hostile, sampleSlots(), nil)
	press(m, tea.WindowSizeMsg{Width: 200, Height: 24})
	raw := m.View().Content
	for _, bad := range []string{"\x1b]", "\a", "\x1b[2J", "\r", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the screen carries %q:\n%q", bad, raw)
		}
	}
	want := ` → [ ] evil\x1b]0;owned\x07 — clear\x1b[2J\r\nfake row \u202e`
	if !strings.Contains(screen(m), want) {
		t.Errorf("row not shown escaped:\n%s", screen(m))
	}
}

// Any terminal size gives a screen that fits it, the cursor's row on it.
func TestResize(t *testing.T) {
	many := samplePlugins()
	for i := range 30 {
		many = append(many, Plugin{Key: fmt.Sprintf("p%02d", i), Name: fmt.Sprintf("p%02d", i), Description: strings.Repeat("wide ", 10)})
	}
	tests := []struct {
		name   string
		w, h   int
		keys   []tea.Msg
		shows  string
		golden string
	}{
		{name: "20 columns", w: 20, h: 12, shows: "disk-cleanup", golden: "narrow"},
		{name: "20 columns at the end", w: 20, h: 12, keys: []tea.Msg{kEnd}, shows: "Context Engi", golden: "narrow-end"},
		{name: "20 columns picker", w: 20, h: 12, keys: []tea.Msg{kEnd, kUp, kEnter}, shows: "built-in (de", golden: "narrow-picker"},
		{name: "short screen scrolls to the cursor", w: 80, h: 8, keys: []tea.Msg{kEnd, kUp}, shows: "Memory Provider", golden: "short-memory"},
		{name: "back home", w: 80, h: 8, keys: []tea.Msg{kEnd, kHome}, shows: "disk-cleanup"},
		{name: "one row", w: 20, h: 1, keys: []tea.Msg{kJ, kJ}, shows: "→ [ ] trace"},
		{name: "one column", w: 1, h: 3},
		{name: "nothing", w: 0, h: 0, keys: []tea.Msg{kEnd, kEnter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(many, sampleSlots(), nil)
			press(m, append([]tea.Msg{tea.WindowSizeMsg{Width: tt.w, Height: tt.h}}, tt.keys...)...)
			got := screen(m)
			lines := strings.Split(got, "\n")
			if len(lines) > max(1, tt.h) {
				t.Errorf("%d lines on a %d-row screen:\n%s", len(lines), tt.h, got)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > max(0, tt.w-1) {
					t.Errorf("line %q is %d columns on a %d-column screen", l, w, tt.w)
				}
			}
			if !strings.Contains(got, tt.shows) {
				t.Errorf("the screen lacks %q:\n%s", tt.shows, got)
			}
			if tt.golden != "" {
				golden(t, tt.golden, got)
			}
		})
	}
}

// Scrolling moves the window only when the cursor would leave it.
func TestScrollFollowsCursor(t *testing.T) {
	var many []Plugin
	for i := range 20 {
		many = append(many, Plugin{Key: fmt.Sprintf("p%02d", i), Name: fmt.Sprintf("p%02d", i)})
	}
	m := New(many, sampleSlots(), nil)
	press(m, tea.WindowSizeMsg{Width: 40, Height: 8}) // 5 body rows
	for range 6 {
		press(m, kDown)
	}
	first := strings.Split(screen(m), "\n")[3]
	press(m, kUp)
	if got := strings.Split(screen(m), "\n")[3]; got != first {
		t.Errorf("moving up inside the window scrolled it: top %q, was %q", got, first)
	}
}

func TestNoPlugins(t *testing.T) {
	m := New(nil, sampleSlots(), nil)
	press(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	golden(t, "no-plugins", screen(m))
	// ENTER on the first row, a provider row, opens its picker; it does not quit.
	if press(m, kEnter) || m.picker == nil {
		t.Fatalf("enter on the memory row: outcome %v, picker open %v", m.Outcome(), m.picker != nil)
	}
}
