package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
)

// runPluginCLI runs `hermes <name> args...` for a command a plugin registered with
// ctx.register_cli_command. Only plugins that passed the opt-in gate are started.
func runPluginCLI(ctx context.Context, app *App, name string, args []string) int {
	code := exitOK
	err := app.runWithManager(ctx, func(m *plugins.Manager) error {
		c, ok := m.Registry().CLICommand(name)
		if !ok {
			msg := fmt.Sprintf("unknown command %q for hermes", name)
			root := newRootCmd(ctx, app)
			root.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply itself
			if s := root.SuggestionsFor(name); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			if cmds := m.Registry().CLICommands(); len(cmds) > 0 {
				var names []string
				for _, c := range cmds {
					names = append(names, c.Name)
				}
				msg += "\n\nPlugin commands: " + strings.Join(names, ", ")
			}
			msg += "\nRun 'hermes --help' for usage."
			return &exitCodeError{code: exitUsage, msg: "Error: " + msg}
		}
		rc, err := c.Run(hostapi.WithCLIStdin(ctx, app.IO.In, echoOff(app.IO.In)), args, app.IO.Out, app.IO.Err)
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

// printPluginCommands ends the root help with the CLI commands of the plugins that
// load, as recorded at their last load: help starts no plugin.
func printPluginCommands(app *App, w io.Writer) {
	m, err := app.Manager()
	if err != nil {
		return // the command that needs plugins will say what is wrong
	}
	defer m.Close(context.Background())
	cmds, unknown := m.CachedCLICommands()
	if len(cmds) > 0 {
		fmt.Fprintln(w, "\nPlugin commands:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range cmds {
			fmt.Fprintf(tw, "  %s\t%s\t(plugin %s)\n", c.Name, c.Help, c.Plugin)
		}
		tw.Flush()
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "\nCommands of %s are listed once they have loaded here (any command that loads plugins, e.g. hermes plugins show %s).\n",
			strings.Join(unknown, ", "), unknown[0])
	}
}
