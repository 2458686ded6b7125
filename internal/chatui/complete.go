package chatui

import (
	"github.com/hermes-go/hermes/internal/chatui/editor"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// completer is the editor's Tab completion: the slash commands (built-in and
// the plugins', each with its argument hint) at the start of the line, and
// the @ references (paths under the working directory after @file: and
// @folder:) anywhere.
func (m *Model) completer(plugin []*registry.Command) editor.Completer {
	cmds := make([]editor.Completion, 0, len(m.o.Commands)+len(plugin))
	add := func(name, args, help string) {
		hint := help
		if args != "" {
			hint = args + " — " + help
		}
		cmds = append(cmds, editor.Completion{Text: name, Hint: hint})
	}
	for _, c := range m.o.Commands {
		add(c.Name, c.Args, c.Help)
	}
	for _, c := range plugin {
		add(c.Name, c.ArgsHint, c.Description)
	}
	return editor.Chain(editor.SlashCompleter(cmds), editor.PathCompleter(m.o.Cwd))
}
