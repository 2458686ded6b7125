package pluginsui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// picker is the radio list of one slot, open over the main screen.
type picker struct {
	slot     int
	values   []string // what each item writes to the config key
	labels   []string // what each item shows, sanitised
	selected int      // the item of the current value
	cursor   int
	scroll   int // the first item on the screen
}

// newPicker lists slot s's choices as upstream does: the built-in default
// first, then the discovered choices, then a configured value that none of
// them is, marked "(not found)".
func newPicker(i int, s Slot) *picker {
	p := &picker{slot: i}
	add := func(value, label string) {
		p.values = append(p.values, value)
		p.labels = append(p.labels, label)
	}
	add(s.DefaultValue, termsafe.Line(s.DefaultLabel)+" (default)")
	seen := map[string]bool{s.DefaultValue: true}
	for _, c := range s.Choices {
		if seen[c.Name] {
			continue // one item per value: a second would be the same pick
		}
		seen[c.Name] = true
		label := termsafe.Line(c.Name)
		if c.Description != "" {
			label += " — " + termsafe.Line(c.Description)
		}
		add(c.Name, label)
	}
	if !seen[s.Current] {
		add(s.Current, termsafe.Line(s.Current)+" (not found)")
	}
	for j, v := range p.values {
		if v == s.Current {
			p.selected, p.cursor = j, j
		}
	}
	return p
}

func (m *Model) openPicker(slot int) { m.picker = newPicker(slot, m.slots[slot]) }

// pickerKeys are the picker's own bindings; navigation is the main screen's.
var pickerKeys = struct{ Choose, Cancel key.Binding }{
	Choose: key.NewBinding(key.WithKeys("enter", "space")),
	Cancel: key.NewBinding(key.WithKeys("esc", "q")),
}

func (m *Model) updatePicker(msg tea.KeyPressMsg) {
	p := m.picker
	n := len(p.values)
	switch {
	case key.Matches(msg, keys.Up):
		p.cursor = (p.cursor - 1 + n) % n
	case key.Matches(msg, keys.Down):
		p.cursor = (p.cursor + 1) % n
	case key.Matches(msg, keys.PageDown):
		p.cursor = min(n-1, p.cursor+m.page())
	case key.Matches(msg, keys.PageUp):
		p.cursor = max(0, p.cursor-m.page())
	case key.Matches(msg, keys.Home):
		p.cursor = 0
	case key.Matches(msg, keys.End):
		p.cursor = n - 1
	case key.Matches(msg, pickerKeys.Cancel):
		m.picker = nil
	case key.Matches(msg, pickerKeys.Choose):
		m.picker = nil
		value := p.values[p.cursor]
		if value == m.slots[p.slot].Current {
			return // unchanged: nothing to write
		}
		// Written here, in the update loop, not in a command: the write takes
		// a moment, and a q typed right after the pick must find it done.
		var err error
		if m.save != nil {
			err = m.save(p.slot, value)
		}
		m.saved(p.slot, value, err)
	}
}
