package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/spf13/cobra"
)

// Main runs hermes with the process arguments and returns the exit code.
func Main() int {
	f := app.New(Version)
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.ArmInterrupts = (&interrupts{cancel: cancel}).arm
	return Run(ctx, f, os.Args[1:])
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

func armInterruptsFor(f *app.Factory, cmd *cobra.Command) {
	if f.ArmInterrupts == nil || cmd.Annotations[instantAnnotation] != "" {
		return
	}
	switch cmd.Name() {
	case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return
	}
	f.ArmInterrupts()
}

// Run executes one hermes invocation built from f (tests call it directly).
func Run(ctx context.Context, f *app.Factory, args []string) int {
	root := newRootCmd(ctx, f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.Err)

	if name, rest, ok := pluginCommandArgs(root, args); ok {
		profile, rest := extractProfile(args, name, rest)
		f.Profile = profile
		if f.ArmInterrupts != nil {
			f.ArmInterrupts()
		}
		return runPluginCLI(ctx, f, name, rest)
	}
	// An unknown command is found before cobra runs anything (with Args set on
	// the root, cobra itself would show the help and exit 0).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	if _, _, err := root.Find(args); err != nil && !completionRequest(args) {
		return app.Report(ctx, f.IO.Err, &app.FlagError{Err: err})
	}
	err := root.ExecuteContext(ctx)
	f.Logs().FlushSuppressed()
	return app.ReportRedacted(ctx, f.IO.Err, err, f.Redactor().String)
}

// completionRequest reports whether args are a shell's completion request, whose
// command cobra adds only as it executes (so Find cannot know it).
func completionRequest(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// usageErrors makes every way cobra can refuse a command line a FlagError
// (exit 2): flags that do not parse, arguments the command does not take, and
// flags used together that must not be.
func usageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &app.FlagError{Err: err} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Args != nil {
			c.Args = flagErrorArgs(c.Args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// flagErrorArgs turns what the cobra argument validator v refuses into a
// FlagError; a validator's own error of another type passes as it is.
func flagErrorArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := v(cmd, args)
		var fe *app.FlagError
		if err == nil || errors.As(err, &fe) {
			return err
		}
		if _, ok := err.(argsError); ok {
			return err
		}
		return &app.FlagError{Err: err}
	}
}

// argsError is an argument error of a verb's own validator that is not a usage
// error of cobra's kind (it keeps exit code 1).
type argsError struct{ error }

func newRootCmd(ctx context.Context, f *app.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "hermes",
		Short:         "An AI agent host with a plugin system compatible with Hermes Agent",
		Long:          "hermes runs Hermes Agent plugins (unchanged Python plugins, Go plugins, any language) out of process,\nwith an opt-in allow-list, hooks, tools and a comment-preserving config.",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// Checked here rather than by cobra after the pre-runs, so that a
			// refusal is a usage error.
			if err := cmd.ValidateFlagGroups(); err != nil {
				return &app.FlagError{Err: err}
			}
			armInterruptsFor(f, cmd)
			return nil
		},
	}
	root.PersistentFlags().StringVarP(&f.Profile, "profile", "p", "", "use the profile `NAME` (HERMES_HOME/profiles/NAME)")
	root.PersistentFlags().BoolVar(&f.AcceptHooks, "accept-hooks", false, "approve every shell hook of config.yaml (hooks:) without asking, and record it")
	root.SetVersionTemplate("hermes {{.Version}}\n")
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			printPluginCommands(f, c.OutOrStdout())
		}
	})
	root.AddCommand(
		newCmdPlugins(f),
		newCmdTools(f),
		newCmdMCP(f),
		newCmdSkills(f),
		newCmdConfig(f),
		newCmdDemo(f, nil),
		newCmdChat(f, nil),
		newCmdSessions(f),
		newCmdPairing(f),
		newCmdGateway(f),
		newCmdOpenURL(f, nil),
		newCmdHooks(f),
		newCmdMemory(f),
		newCmdModel(f),
	)
	usageErrors(root)
	addCompletions(root, f)
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
