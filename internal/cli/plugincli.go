package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins"
)

// runPluginCLI runs `hermes <name> args...` for a command a plugin registered with
// ctx.register_cli_command. Only plugins that passed the opt-in gate are started.
func runPluginCLI(ctx context.Context, app *App, name string, args []string) int {
	code := exitOK
	err := app.runWithManager(ctx, func(m *plugins.Manager) error {
		c, ok := m.CLICommand(name)
		if !ok {
			msg := fmt.Sprintf("unknown command %q for hermes", name)
			root := newRootCmd(ctx, app)
			if s := root.SuggestionsFor(name); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			if cmds := m.CLICommands(); len(cmds) > 0 {
				var names []string
				for _, c := range cmds {
					names = append(names, c.Name)
				}
				msg += "\n\nPlugin commands: " + strings.Join(names, ", ")
			}
			msg += "\nRun 'hermes --help' for usage."
			return &exitCodeError{code: exitUsage, msg: "Error: " + msg}
		}
		rc, err := c.Run(plugins.WithCLIStdin(ctx, app.IO.In, echoOff(app.IO.In)), args, app.IO.Out, app.IO.Err)
		if err != nil && ctx.Err() != nil {
			// Ctrl-C: the user knows; no "context canceled" error on top.
			code = exitInterrupt
			return nil
		}
		if err != nil {
			return failf("hermes %s (plugin %s) failed: %v", name, c.Plugin, err)
		}
		code = rc
		return nil
	})
	app.flushSuppressed()
	if err != nil {
		if ec, ok := err.(*exitCodeError); ok {
			if ec.msg != "" {
				fmt.Fprintln(app.IO.Err, ec.msg)
			}
			return ec.code
		}
		fmt.Fprintf(app.IO.Err, "Error: %v\n", err)
		return exitError
	}
	return code
}
