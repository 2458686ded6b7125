// Package pluginsui is the interactive screen of `hermes plugins` (no
// arguments, on a terminal): checkboxes for the general plugins and one row per
// provider slot (memory provider, context engine) that opens a radio picker.
// It is a Bubble Tea model and knows nothing of config files: the caller gives
// it the rows and a function that saves a provider pick, and reads the checked
// plugins back from the final model.
package pluginsui

import (
	"context"
	"errors"
	"fmt"
	"io"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Plugin is one general plugin row.
type Plugin struct {
	Key         string // the canonical key, what plugins.enabled/disabled name
	Name        string // the manifest name
	Description string
	Bundled     bool
	Checked     bool // enabled when the screen opened
}

// Choice is one pickable provider: the value its config key takes and what it is.
type Choice struct {
	Name        string
	Description string
}

// Slot is one provider row: a config key that selects at most one provider.
type Slot struct {
	Title        string // "Memory Provider"
	DefaultLabel string // shown for DefaultValue: "built-in"
	DefaultValue string // the built-in choice's value: "" for memory, "compressor"
	Current      string // the configured value
	Choices      []Choice
}

// label is what the row shows after ▸: the current value, or the default's label.
func (s Slot) label() string {
	if s.Current == s.DefaultValue {
		return s.DefaultLabel
	}
	return s.Current
}

// SaveFunc persists the pick of slot i (its value) at once, as upstream's picker
// does; an error is shown on the screen and the slot keeps its old value.
type SaveFunc func(slot int, value string) error

// Outcome is how the screen ended.
type Outcome int

// The outcomes.
const (
	Running     Outcome = iota
	Done                // ESC, q or ENTER on a plugin row: the checkboxes are saved
	Interrupted         // Ctrl-C: nothing more is saved
)

// Model is the screen's state.
type Model struct {
	plugins []Plugin
	checked []bool
	slots   []Slot
	save    SaveFunc

	cursor        int
	scroll        int // the first body line on the screen
	width, height int
	picker        *picker
	status        string // the last save error, shown under the rows
	outcome       Outcome
	// ProvidersChanged is set once a pick was saved.
	providersChanged bool
}

// New returns the screen over plugins and slots; save persists provider picks.
func New(plugins []Plugin, slots []Slot, save SaveFunc) *Model {
	m := &Model{plugins: plugins, slots: slots, save: save, width: 80, height: 24}
	m.checked = make([]bool, len(plugins))
	for i, p := range plugins {
		m.checked[i] = p.Checked
	}
	return m
}

// Checked reports, per plugin row, whether it is checked now.
func (m *Model) Checked() []bool { return append([]bool(nil), m.checked...) }

// Slots returns the provider rows with their current values.
func (m *Model) Slots() []Slot { return append([]Slot(nil), m.slots...) }

// ProvidersChanged reports whether a provider pick was saved.
func (m *Model) ProvidersChanged() bool { return m.providersChanged }

// Outcome reports how the screen ended (Running while it runs).
func (m *Model) Outcome() Outcome { return m.outcome }

// Cursor is the index of the row under the cursor: plugins first, then slots.
func (m *Model) Cursor() int { return m.cursor }

// rows is how many rows the cursor moves over.
func (m *Model) rows() int { return len(m.plugins) + len(m.slots) }

// keys are the screen's bindings (wave2 §5).
var keys = struct {
	Up, Down, PageDown, PageUp, Home, End, Toggle, Enter, Done, Interrupt key.Binding
}{
	Up:        key.NewBinding(key.WithKeys("up", "k")),
	Down:      key.NewBinding(key.WithKeys("down", "j")),
	PageDown:  key.NewBinding(key.WithKeys("pgdown", "f")),
	PageUp:    key.NewBinding(key.WithKeys("pgup", "b")),
	Home:      key.NewBinding(key.WithKeys("home")),
	End:       key.NewBinding(key.WithKeys("end")),
	Toggle:    key.NewBinding(key.WithKeys("space")),
	Enter:     key.NewBinding(key.WithKeys("enter")),
	Done:      key.NewBinding(key.WithKeys("esc", "q")),
	Interrupt: key.NewBinding(key.WithKeys("ctrl+c")),
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.follow()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return nil
	case tea.KeyPressMsg:
		if key.Matches(msg, keys.Interrupt) {
			m.outcome = Interrupted
			return tea.Quit
		}
		if m.picker != nil {
			m.updatePicker(msg)
			return nil
		}
		return m.updateMain(msg)
	}
	return nil
}

// saved records the outcome of writing value for slot.
func (m *Model) saved(slot int, value string, err error) {
	if err != nil {
		m.status = "Could not save " + m.slots[slot].Title + ": " + termsafe.Line(err.Error())
		return
	}
	m.status = ""
	if m.slots[slot].Current != value {
		m.slots[slot].Current = value
		m.providersChanged = true
	}
}

// page is how far PgUp/PgDn move: the terminal's rows less 5, as upstream.
func (m *Model) page() int { return max(1, m.height-5) }

func (m *Model) updateMain(msg tea.KeyPressMsg) tea.Cmd {
	n := m.rows()
	if n == 0 {
		if key.Matches(msg, keys.Done, keys.Enter) {
			m.outcome = Done
			return tea.Quit
		}
		return nil
	}
	switch {
	case key.Matches(msg, keys.Up):
		m.cursor = (m.cursor - 1 + n) % n
	case key.Matches(msg, keys.Down):
		m.cursor = (m.cursor + 1) % n
	case key.Matches(msg, keys.PageDown):
		m.cursor = min(n-1, m.cursor+m.page())
	case key.Matches(msg, keys.PageUp):
		m.cursor = max(0, m.cursor-m.page())
	case key.Matches(msg, keys.Home):
		m.cursor = 0
	case key.Matches(msg, keys.End):
		m.cursor = n - 1
	case key.Matches(msg, keys.Toggle):
		if m.cursor < len(m.plugins) {
			m.checked[m.cursor] = !m.checked[m.cursor]
		} else {
			m.openPicker(m.cursor - len(m.plugins))
		}
	case key.Matches(msg, keys.Enter):
		if m.cursor < len(m.plugins) {
			m.outcome = Done
			return tea.Quit
		}
		m.openPicker(m.cursor - len(m.plugins))
	case key.Matches(msg, keys.Done):
		m.outcome = Done
		return tea.Quit
	}
	return nil
}

// Run shows the screen on the terminal in/out until it ends; env is the
// process environment (TERM and the colour settings come from it).
func Run(ctx context.Context, m *Model, in io.Reader, out io.Writer, env []string) error {
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithEnvironment(env))
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrInterrupted) {
			m.outcome = Interrupted
			return nil
		}
		return fmt.Errorf("plugins screen: %w", err)
	}
	return nil
}
