package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitInterrupt = 130
)

// exitError carries a specific exit code through cobra.
type exitCodeError struct {
	code int
	msg  string
}

func (e *exitCodeError) Error() string { return e.msg }

// failf returns an error that prints msg and exits 1.
func failf(format string, args ...any) error {
	return &exitCodeError{code: exitError, msg: fmt.Sprintf(format, args...)}
}

// silentExit exits with code without printing anything more.
func silentExit(code int) error { return &exitCodeError{code: code} }

// Main runs hermes with the process arguments and returns the exit code.
func Main() int {
	app := NewApp()
	defer app.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app.armInterrupts = (&interrupts{cancel: cancel}).arm
	return Run(ctx, app, os.Args[1:])
}

// interrupts turns the first SIGINT or SIGTERM into cancelling the command's
// context; a second one exits at once (plugin processes die with the host:
// Pdeathsig and their own EOF watchdog). It is armed only for commands that can
// run long: os/signal's first Notify starts a goroutine locked to an OS thread of
// its own, plus the runtime's template thread, ~0.8 ms of every short command on
// a VM, for listings that end before anyone could press Ctrl-C (where the default
// action, exiting, is what the user wants anyway).
type interrupts struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (i *interrupts) arm() {
	i.once.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-ch
			signal.Stop(ch) // back to the default action for the next one
			i.cancel()
		}()
	})
}

// instantAnnotation marks a command that only reads local files and returns at
// once: it runs without interrupt handling (see interrupts).
const instantAnnotation = "hermes/instant"

func instant() map[string]string { return map[string]string{instantAnnotation: "true"} }

func armInterruptsFor(app *App, cmd *cobra.Command) {
	if app.armInterrupts == nil || cmd.Annotations[instantAnnotation] != "" {
		return
	}
	switch cmd.Name() {
	case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return
	}
	app.armInterrupts()
}

// Run executes one hermes invocation against app (tests call it directly).
func Run(ctx context.Context, app *App, args []string) int {
	root := newRootCmd(ctx, app)
	root.SetArgs(args)
	root.SetIn(app.IO.In)
	root.SetOut(app.IO.Out)
	root.SetErr(app.IO.Err)

	if name, rest, ok := pluginCommandArgs(root, args); ok {
		profile, rest := extractProfile(args, name, rest)
		app.Profile = profile
		if app.armInterrupts != nil {
			app.armInterrupts()
		}
		return runPluginCLI(ctx, app, name, rest)
	}
	err := root.ExecuteContext(ctx)
	app.flushSuppressed()
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(app.IO.Err, ec.msg)
		}
		return ec.code
	}
	if ctx.Err() != nil {
		fmt.Fprintln(app.IO.Err, "interrupted")
		return exitInterrupt
	}
	fmt.Fprintf(app.IO.Err, "Error: %v\n", err)
	if isUsageError(err) {
		return exitUsage
	}
	return exitError
}

func isUsageError(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "accepts ", "requires at least", "flag needs an argument", "invalid argument", "unknown command", "if any flags in the group"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func newRootCmd(ctx context.Context, app *App) *cobra.Command {
	root := &cobra.Command{
		Use:           "hermes",
		Short:         "An AI agent host with a plugin system compatible with Hermes Agent",
		Long:          "hermes runs Hermes Agent plugins (unchanged Python plugins, Go plugins, any language) out of process,\nwith an opt-in allow-list, hooks, tools and a comment-preserving config.",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			armInterruptsFor(app, cmd)
		},
	}
	root.PersistentFlags().StringVarP(&app.Profile, "profile", "p", "", "use the profile `NAME` (HERMES_HOME/profiles/NAME)")
	root.SetVersionTemplate("hermes {{.Version}}\n")
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			printPluginCommands(app, c.OutOrStdout())
		}
	})
	root.AddCommand(
		newPluginsCmd(app),
		newToolsCmd(app),
		newConfigCmd(app),
		newDemoCmd(app),
		newChatCmd(app),
		newSessionsCmd(app),
		newOpenURLCmd(app),
	)
	return root
}

// pluginCommandArgs decides whether args name a plugin CLI command (`hermes <name>`):
// the first non-flag word is not a built-in command.
func pluginCommandArgs(root *cobra.Command, args []string) (string, []string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return "", nil, false
		}
		if strings.HasPrefix(a, "-") {
			if a == "--profile" || a == "-p" {
				i++
			}
			continue
		}
		if a == "help" || a == "completion" || a == "__complete" || a == "__completeNoDesc" {
			return "", nil, false
		}
		for _, c := range root.Commands() {
			if c.Name() == a || c.HasAlias(a) {
				return "", nil, false
			}
		}
		return a, args[i+1:], true
	}
	return "", nil, false
}

// extractProfile pulls --profile from the global flags before the plugin command name.
func extractProfile(args []string, name string, rest []string) (string, []string) {
	profile := ""
	for i := 0; i < len(args) && args[i] != name; i++ {
		switch {
		case (args[i] == "--profile" || args[i] == "-p") && i+1 < len(args):
			profile = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--profile="):
			profile = strings.TrimPrefix(args[i], "--profile=")
		}
	}
	return profile, rest
}
