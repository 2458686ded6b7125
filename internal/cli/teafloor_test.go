package cli_test

import (
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/chatui"
)

// teaFloor is the least a program can do to show a ready prompt on a
// terminal: a Bubble Tea program drawing one line (at the chat's frame rate)
// and waiting for a key. The start-up benchmark runs it beside `hermes chat`:
// it is the same binary, so process start and package initialisation are the
// same too, and what is left between the two is the chat's own work.
func teaFloor() {
	p := tea.NewProgram(floorModel{}, tea.WithFPS(chatui.FPS))
	if _, err := p.Run(); err != nil {
		os.Exit(1)
	}
}

type floorModel struct{}

func (floorModel) Init() tea.Cmd { return nil }

func (m floorModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		return m, tea.Quit
	}
	return m, nil
}

func (floorModel) View() tea.View { return tea.NewView("floor ready ›") }
