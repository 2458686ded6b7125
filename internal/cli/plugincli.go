package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hermes-go/hermes/internal/app"
)

// runPluginCLI runs `hermes <name> args...` for a command a plugin registered with
// ctx.register_cli_command. Only plugins that passed the opt-in gate are started.
func runPluginCLI(ctx context.Context, f *app.Factory, name string, args []string) int {
	code := app.ExitOK
	err := f.WithHost(ctx, func(m *app.Host) error {
		c, ok := m.Registry.CLICommand(name)
		if !ok {
			msg := fmt.Sprintf("unknown command %q for hermes", name)
			root := newRootCmd(ctx, f)
			root.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply itself
			if s := root.SuggestionsFor(name); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			if cmds := m.Registry.CLICommands(); len(cmds) > 0 {
				var names []string
				for _, c := range cmds {
					names = append(names, c.Name)
				}
				msg += "\n\nPlugin commands: " + strings.Join(names, ", ")
			}
			msg += "\nRun 'hermes --help' for usage."
			return &app.ExitError{Code: app.ExitUsage, Message: "Error: " + msg}
		}
		rc, err := m.RunCLICommand(ctx, c, args)
		if err != nil && ctx.Err() != nil {
			// Ctrl-C: the user knows; no "context canceled" error on top.
			code = app.ExitInterrupted
			return nil
		}
		if err != nil {
			return app.Failf("hermes %s (plugin %s) failed: %v", name, c.Plugin, err)
		}
		code = rc
		return nil
	})
	f.Logs().FlushSuppressed()
	if err != nil {
		return app.Report(ctx, f.IO.Err, err)
	}
	return code
}

// printPluginCommands ends the root help with the CLI commands of the plugins that
// load, as recorded at their last load: help starts no plugin.
func printPluginCommands(f *app.Factory, w io.Writer) {
	m, err := f.Host(context.Background())
	if err != nil {
		return // the command that needs plugins will say what is wrong
	}
	defer m.Close()
	cmds, unknown := m.CachedCLICommands()
	if len(cmds) > 0 {
		fmt.Fprintln(w, "\nPlugin commands:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range cmds {
			sayf(tw, "  %s\t%s\t(plugin %s)\n", c.Name, c.Help, c.Plugin)
		}
		tw.Flush()
	}
	if len(unknown) > 0 {
		sayf(w, "\nCommands of %s are listed once they have loaded here (any command that loads plugins, e.g. hermes plugins show %s).\n",
			strings.Join(unknown, ", "), unknown[0])
	}
}
