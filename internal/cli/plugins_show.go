package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// ---- show -------------------------------------------------------------------------

type showJSON struct {
	Name        string              `json:"name"`
	Key         string              `json:"key"`
	Status      plugins.Status      `json:"status"`
	Version     string              `json:"version"`
	Description string              `json:"description"`
	Source      string              `json:"source"`
	Kind        string              `json:"kind"`
	Path        string              `json:"path"`
	Runtime     plugins.RuntimeKind `json:"runtime"`
	Loaded      bool                `json:"loaded"`
	// State is where the plugin is in the life show just gave it.
	State       plugins.LoadState `json:"state"`
	Restarts    int               `json:"restarts"`
	LastRestart string            `json:"last_restart,omitempty"` // why it was last restarted
	Deferred    bool              `json:"deferred,omitempty"`     // a bundled platform plugin, left to a gateway
	Tools       []string          `json:"tools"`
	Hooks       []string          `json:"hooks"`
	Commands    []string          `json:"commands"`
	CLICommands []string          `json:"cli_commands"`
	Skills      []string          `json:"skills"`
	Middleware  []string          `json:"middleware"`
	Other       []registry.Other  `json:"other_registrations"`
	Emits       []string          `json:"emits"`
	Listens     []string          `json:"listens"`
	Removed     *string           `json:"removed"` // the catalog kill list's reason, as in list --json
	Error       *string           `json:"error"`
}

type showOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string
	JSON bool
}

func newCmdPluginsShow(f *app.Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Load one plugin (if enabled) and show what it registers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsShowRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

func pluginsShowRun(ctx context.Context, opts *showOptions) error {
	m, err := opts.Factory.Host(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	p, err := m.Resolve(opts.Name)
	if err != nil {
		return app.Failf("%v", err)
	}
	// An enabled plugin is loaded with every other enabled plugin, as in a session, so
	// what it shows (tool name clashes, has_plugin answers) is what a session gets.
	// A plugin that is not enabled is never started.
	if p.Decision.Starts() {
		if err := m.LoadQuietly(ctx); err != nil {
			return err
		}
		// A plugin that crashed while loading is shown restarted or failed, not
		// halfway through (the restart policy bounds the wait).
		m.Settle(ctx)
	}
	mf := p.Candidate.Manifest
	reg := p.Snapshot()
	out := showJSON{
		Name: mf.Name, Key: p.Key, Status: p.Status, Version: mf.Version, Description: mf.Description,
		Source: sourceLabel(provenance{}, p), Kind: mf.Kind, Path: p.Candidate.Dir, Runtime: p.Runtime, Loaded: p.IsLoaded(),
		Deferred: p.Decision.Deferred, Tools: nonNil(reg.Tools), Middleware: nonNil(reg.Middleware), Other: reg.Other,
		Emits: nonNil(mf.Emits), Listens: nonNil(mf.Listens), Removed: removedReason(p),
	}
	out.State, _ = p.State()
	out.Restarts, out.LastRestart = p.Restarts()
	if out.Other == nil {
		out.Other = []registry.Other{}
	}
	for _, h := range reg.Hooks {
		out.Hooks = append(out.Hooks, h.Hook)
	}
	for _, c := range reg.Commands {
		out.Commands = append(out.Commands, c.Name)
	}
	for _, c := range reg.CLICommands {
		out.CLICommands = append(out.CLICommands, c.Name)
	}
	for _, s := range reg.Skills {
		out.Skills = append(out.Skills, s.Name)
	}
	out.Hooks, out.Commands, out.CLICommands, out.Skills = nonNil(out.Hooks), nonNil(out.Commands), nonNil(out.CLICommands), nonNil(out.Skills)
	errText := p.ErrorText()
	if errText == "" && !p.Decision.Starts() && p.Decision.Error != "" {
		errText = p.Decision.Error
	}
	if errText != "" {
		out.Error = &errText
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, out); err != nil {
			return err
		}
		if p.ErrorText() != "" {
			return app.SilentExit(app.ExitFail)
		}
		return nil
	}
	w := opts.IO.Out
	if mf.Version != "" {
		sayf(w, "%s v%s\n", mf.Name, mf.Version)
	} else {
		sayf(w, "%s\n", mf.Name)
	}
	if mf.Description != "" {
		fmt.Fprintf(w, "%s\n", safeText(mf.Description))
	}
	sayf(w, "\nStatus:   %s\n", p.Status)
	sayf(w, "Source:   %s\n", out.Source)
	sayf(w, "Key:      %s\n", p.Key)
	sayf(w, "Kind:     %s\n", mf.Kind)
	sayf(w, "Runtime:  %s\n", p.Runtime)
	if p.Decision.Starts() {
		sayf(w, "State:    %s\n", stateLine(p, false)) // the error has its own line
	}
	if out.Path != "" {
		sayf(w, "Path:     %s\n", out.Path)
	}
	if len(mf.Emits) > 0 {
		sayf(w, "Emits:    %s\n", strings.Join(mf.Emits, ", "))
	}
	if len(mf.Listens) > 0 {
		sayf(w, "Listens:  %s\n", strings.Join(mf.Listens, ", "))
	}
	if r := p.Removal; r != nil {
		when := ""
		if r.Date != "" {
			when = " on " + r.Date
		}
		sayf(w, "Removed:  from the Hermes plugin catalog%s: %s\n", when, r.ReasonText())
		if r.Allowed {
			fmt.Fprintln(w, "          It loads anyway: it was installed with --allow-removed.")
		}
	}
	if errText != "" {
		// Often a traceback: its lines stay lines.
		fmt.Fprintf(w, "Error:    %s\n", safeText(errText))
	}
	if p.IsLoaded() && p.Decision.Deferred {
		fmt.Fprintln(w, "\nDeferred: a platform plugin. Only its tools.py ran (register_tools), so its tools are available;")
		fmt.Fprintln(w, "the platform itself is loaded by a gateway, which this host does not have yet.")
	}
	if !p.IsLoaded() {
		switch {
		case p.Decision.Deferred:
			// Upstream parks bundled platform plugins for the gateway whether or not
			// they are enabled, so enabling one would change nothing here.
			fmt.Fprintln(w, "\nNot loaded: deferred. A platform plugin is loaded by the gateway when its platform is used;")
			fmt.Fprintln(w, "this host has no gateway yet, so it is not loaded (enabling it does not change that).")
			switch {
			case len(mf.ProvidesTools) == 0:
			case p.ErrorText() != "":
				sayf(w, "Its tools (%s) are not registered either: its tools.py failed (see Error).\n", strings.Join(mf.ProvidesTools, ", "))
			default:
				sayf(w, "Its tools (%s) are not registered either: it has no tools.py with register_tools(ctx).\n", strings.Join(mf.ProvidesTools, ", "))
			}
		case p.Status == plugins.StatusRemoved:
			fmt.Fprintln(w, "\nNot loaded: the catalog's kill list keeps it from loading.")
		case p.Status != plugins.StatusEnabled:
			sayf(w, "\nNot loaded: enable it first (hermes plugins enable %s) to see what it registers.\n", p.Key)
		}
		if p.ErrorText() != "" {
			return app.SilentExit(app.ExitFail)
		}
		return nil
	}
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		sort.Strings(items)
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, it := range items {
			sayf(w, "  %s\n", it)
		}
	}
	section("Tools", append([]string{}, out.Tools...))
	var hooks []string
	for _, h := range reg.Hooks {
		hooks = append(hooks, h.Hook+" ("+h.Callback+")")
	}
	section("Hooks", hooks)
	var cmds []string
	for _, c := range reg.Commands {
		cmds = append(cmds, strings.TrimSpace("/"+c.Name+" "+c.ArgsHint)+" — "+c.Description)
	}
	section("Commands", cmds)
	var clis []string
	for _, c := range reg.CLICommands {
		clis = append(clis, strings.TrimSpace("hermes "+c.Name+" — "+c.Help))
	}
	section("CLI commands", clis)
	section("Skills", append([]string{}, out.Skills...))
	section("Middleware", append([]string{}, out.Middleware...))
	var others []string
	for _, o := range reg.Other {
		others = append(others, strings.Join(nonEmpty(o.Registrar, o.Name, "("+o.Note+")"), " "))
	}
	section("Other registrations", others)
	return nil
}

func nonEmpty(items ...string) []string {
	var out []string
	for _, s := range items {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// stateLine is a plugin's load state in one line, as /plugins and `plugins
// show` print it: "loaded", "crashed, restarting (exited (exit status 7))",
// "failed: hermes gave up restarting it ...", "error: ..." (withError).
func stateLine(p *plugins.Plugin, withError bool) string {
	state, detail := p.State()
	text := state.Label()
	switch state {
	case plugins.StateLoaded:
		if n, last := p.Restarts(); n > 0 {
			text += fmt.Sprintf(", restarted %d time%s (last: %s)", n, plural(n), last)
		}
	case plugins.StateCrashed, plugins.StateRestarting:
		if detail != "" {
			text += " (" + detail + ")"
		}
	case plugins.StateError, plugins.StateFailed:
		if withError {
			text += ": " + detail
		}
	}
	return text
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
