package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins"
)

// newCmdPlugins is the `hermes plugins` group. Its own run only refuses what
// is not an action; the verbs are its children.
func newCmdPlugins(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List, enable, disable and inspect plugins",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				// Upstream's words and exit code (1, not a usage error's 2).
				msg := "Unknown plugins action: " + args[0]
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += "\nDid you mean " + strings.Join(s, " or ") + "?"
				}
				return app.Failf("%s\nRun 'hermes plugins --help' for the actions.", msg)
			}
			return pluginsScreenRun(cmd.Context(), f)
		},
	}
	cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply itself
	cmd.AddCommand(newCmdPluginsList(f, nil), newCmdPluginsEnable(f, nil), newCmdPluginsDisable(f, nil), newCmdPluginsShow(f, nil))
	cmd.AddCommand(newCmdPluginsScan(f, nil))
	cmd.AddCommand(pluginsInstallCommands(f)...)
	cmd.AddCommand(pluginsCatalogCommands(f)...)
	cmd.AddCommand(newCmdPluginsPack(f))
	return cmd
}

// ---- list -------------------------------------------------------------------------

type listOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	EnabledOnly bool
	UserOnly    bool
	NoBundled   bool
	Plain       bool
	JSON        bool
}

// filters are the flags that narrow the listing, as typed.
func (o *listOptions) filters() []string {
	var f []string
	for _, x := range []struct {
		on   bool
		flag string
	}{{o.EnabledOnly, "--enabled"}, {o.UserOnly, "--user"}, {o.NoBundled, "--no-bundled"}} {
		if x.on {
			f = append(f, x.flag)
		}
	}
	return f
}

type listRow struct {
	Name        string         `json:"name"`
	Status      plugins.Status `json:"status"`
	Version     string         `json:"version"`
	Description string         `json:"description"`
	Source      string         `json:"source"`
	// Removed is upstream's S1 field: the kill list's reason, or null.
	Removed *string `json:"removed"`
	// Kind is set for provider plugins (memory-provider, context-engine,
	// model-provider), which are listed apart from the general plugins.
	Kind string `json:"kind,omitempty"`
}

// removedReason is what `removed` says in JSON: nil unless the catalog's kill list
// names the plugin.
func removedReason(p *plugins.Plugin) *string {
	if p.Removal == nil {
		return nil
	}
	r := p.Removal.ReasonText()
	return &r
}

func newCmdPluginsList(f *app.Factory, runF func(*listOptions) error) *cobra.Command {
	opts := &listOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:         "list",
		Aliases:     []string{"ls"},
		Short:       "List installed and bundled plugins with their state (starts no plugin)",
		Args:        cobra.NoArgs,
		Annotations: instant(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pluginsListRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.EnabledOnly, "enabled", false, "only plugins that are enabled")
	fl.BoolVar(&opts.UserOnly, "user", false, "only user-installed plugins (no bundled)")
	fl.BoolVar(&opts.NoBundled, "no-bundled", false, "hide bundled plugins")
	fl.BoolVar(&opts.Plain, "plain", false, "one plugin per line, no table")
	fl.BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

// sourceLabel is upstream's Source column: bundled, user, git (a user plugin that is
// a git checkout), project, entrypoint; catalog:<tier>@<sha8> or git pinned@<sha8>
// when the install metadata records that provenance.
func sourceLabel(pv provenance, p *plugins.Plugin) string {
	c := p.Candidate
	src := string(c.Source)
	if l := pv.label(p); l != "" {
		return l
	}
	if c.GitCheckout {
		return "git"
	}
	return src
}

func pluginsListRun(ctx context.Context, opts *listOptions) error {
	m, err := opts.Factory.Host(ctx)
	if err != nil {
		return err
	}
	var rows []listRow
	var allowed []*plugins.Plugin // on the kill list, installed with --allow-removed
	pv := provenance(m.InstallMetadata())
	all := m.Plugins()
	for _, p := range all {
		if (opts.UserOnly || opts.NoBundled) && p.Candidate.Source == "bundled" {
			continue
		}
		if opts.EnabledOnly && p.Candidate.Category == "" && p.Status != plugins.StatusEnabled {
			continue
		}
		mf := p.Candidate.Manifest
		if opts.EnabledOnly && p.Candidate.Category != "" && p.Status != plugins.StatusActive && p.Status != plugins.StatusEnabled {
			continue
		}
		rows = append(rows, listRow{Name: p.Key, Status: p.Status, Version: mf.Version, Description: mf.Description, Source: sourceLabel(pv, p),
			Removed: removedReason(p), Kind: plugins.KindOf(p.Candidate.Category)})
		if p.Removal != nil && p.Removal.Allowed {
			allowed = append(allowed, p)
		}
	}
	// One write for the whole listing: a line at a time costs a system call per plugin.
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	defer out.Flush()
	switch {
	case opts.JSON:
		if rows == nil {
			rows = []listRow{}
		}
		return writeJSON(out, rows)
	case len(rows) == 0:
		// --plain output is one line per plugin for scripts: the note goes to stderr.
		var note io.Writer = out
		if opts.Plain {
			note = opts.IO.Err
		}
		if len(all) > 0 {
			// Only a filter left nothing: saying none is installed would be false.
			fmt.Fprintf(note, "No plugins match %s (%d installed; see hermes plugins list)\n", strings.Join(opts.filters(), " "), len(all))
			return nil
		}
		fmt.Fprintln(note, "No plugins installed.")
		fmt.Fprintln(note, "Install with: hermes plugins install owner/repo")
		return nil
	case opts.Plain:
		for _, r := range rows {
			sayf(out, "%-12s %-8s %-8s %s\n", r.Status, r.Source, r.Version, r.Name)
		}
		return nil
	}
	t := &table{color: opts.Factory.Color()}
	t.header("Name", "Status", "Version", "Description", "Source")
	pt := &table{color: opts.Factory.Color()}
	pt.header("Name", "Kind", "Status", "Version", "Description", "Source")
	general, providers := 0, 0
	for _, r := range rows {
		if r.Kind != "" {
			providers++
			pt.row(r.Name, r.Kind, string(r.Status), r.Version, truncate(r.Description, 60), r.Source)
			pt.paintLast(2, statusColour(string(r.Status)))
			continue
		}
		general++
		t.row(r.Name, string(r.Status), r.Version, truncate(r.Description, 60), r.Source)
		t.paintLast(1, statusColour(string(r.Status)))
	}
	if general > 0 {
		fmt.Fprintln(out, "Plugins")
		t.write(out)
		fmt.Fprintln(out)
	}
	if providers > 0 {
		// Provider plugins are activated by their own setting, not plugins.enabled.
		fmt.Fprintln(out, "Provider plugins (memory.provider selects the memory provider, context.engine the context engine)")
		pt.write(out)
		fmt.Fprintln(out)
	}
	for _, r := range rows {
		if r.Status == plugins.StatusRemoved {
			sayf(out, "removed: %s was removed from the Hermes plugin catalog (%s) and does not load; see hermes plugins show %s\n", r.Name, *r.Removed, r.Name)
		}
	}
	for _, p := range allowed {
		sayf(out, "note: %s is on the catalog's kill list (%s); it loads because it was installed with --allow-removed\n", p.Key, p.Removal.ReasonText())
	}
	fmt.Fprintln(out, "Enable with: hermes plugins enable <name>   Inspect: hermes plugins show <name>")
	return nil
}

// ---- enable / disable -------------------------------------------------------------

type enableOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string
	// ToolOverride is what --allow-tool-override (true) or
	// --no-allow-tool-override (false) says; nil when neither was given.
	ToolOverride *bool
}

func newCmdPluginsEnable(f *app.Factory, runF func(*enableOptions) error) *cobra.Command {
	opts := &enableOptions{IO: f.IO, Factory: f}
	var allow, deny bool
	cmd := &cobra.Command{
		Use:   "enable NAME",
		Short: "Add a plugin to the plugins.enabled allow-list",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			// Whether a flag was given decides, not its value: the flags are exclusive.
			switch {
			case cmd.Flags().Changed("allow-tool-override"):
				opts.ToolOverride = boolPtr(true)
			case cmd.Flags().Changed("no-allow-tool-override"):
				opts.ToolOverride = boolPtr(false)
			}
			if runF != nil {
				return runF(opts)
			}
			return pluginsEnableRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&allow, "allow-tool-override", false, "let the plugin replace built-in tools (legacy allow_tool_override)")
	cmd.Flags().BoolVar(&deny, "no-allow-tool-override", false, "do not let the plugin replace built-in tools")
	cmd.MarkFlagsMutuallyExclusive("allow-tool-override", "no-allow-tool-override")
	return cmd
}

func boolPtr(v bool) *bool { return &v }

// leaf is the last path segment of a category key ("observability/langfuse" → "langfuse").
func leaf(key string) string {
	if i := strings.LastIndex(key, "/"); i >= 0 {
		return key[i+1:]
	}
	return key
}

// allowList moves one plugin between plugins.enabled and plugins.disabled. move
// reports true when the plugin was already where it should be (nothing written).
func allowList(ctx context.Context, f *app.Factory, name string, move func(d *config.Doc, p *plugins.Plugin) (bool, error)) (*app.Host, *plugins.Plugin, bool, error) {
	m, err := f.Host(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	p, err := m.Resolve(name)
	if err != nil {
		return nil, nil, false, app.Failf("%v", err)
	}
	already := false
	err = m.Store().Update(ctx, func(d *config.Doc) error {
		var err error
		already, err = move(d, p)
		return err
	})
	return m, p, already, err
}

func pluginsEnableRun(ctx context.Context, opts *enableOptions) error {
	return enablePlugin(ctx, opts.Factory, opts.Name, opts.ToolOverride)
}

// enablePlugin is `hermes plugins enable`, also the last step of an install
// that enables; toolOverride is the answer to the legacy tool-override question
// when the command line gave it.
func enablePlugin(ctx context.Context, f *app.Factory, name string, toolOverride *bool) error {
	m, p, already, err := allowList(ctx, f, name, func(d *config.Doc, p *plugins.Plugin) (bool, error) {
		if err := providerNotEnableable(p); err != nil {
			return false, err
		}
		if killed(p) {
			return false, removedError(p, "was not enabled")
		}
		key := p.Key
		settings, _ := config.Plugins(d)
		names := uniq(key, leaf(key), p.Candidate.Manifest.Name)
		// "Already enabled" only when nothing on the deny-list still names it: a
		// leaf or manifest name there disables it as surely as its key does.
		if settings.EnabledSet && contains(settings.Enabled, key) && !slices.ContainsFunc(names, func(n string) bool { return contains(settings.Disabled, n) }) {
			return true, nil
		}
		if _, err := d.ListAppend("plugins.enabled", key); err != nil {
			return false, err
		}
		for _, n := range names {
			if _, err := d.ListRemove("plugins.disabled", n); err != nil {
				return false, err
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if already {
		sayf(f.IO.Out, "Plugin '%s' is already enabled.\n", p.Key)
		// Capabilities a non-interactive install or update left off are granted here.
		if declared := capability.KnownOnly(p.Candidate.Manifest.Capabilities); len(declared) > 0 && p.Candidate.Source != "bundled" {
			return runCapabilityConsent(ctx, f, m, p.Key, declared, "requests")
		}
		return nil
	}
	sayf(f.IO.Out, "✓ Plugin %s enabled. Takes effect on next session.\n", p.Key)
	if p.Candidate.Source != "bundled" {
		return afterEnableConsent(ctx, f, m, p, toolOverride)
	}
	return nil
}

// providerNotEnableable explains why plugins.enabled would not activate a
// memory provider or context engine: their category's setting selects one.
func providerNotEnableable(p *plugins.Plugin) error {
	n := p.Candidate.ProviderName()
	switch p.Candidate.Category {
	case "memory":
		return app.Failf("'%s' is a memory provider: plugins.enabled does not activate it. Select it with `hermes memory setup %s` (config.yaml memory.provider: %s); `hermes memory off` goes back to the built-in memory only", p.Key, n, n)
	case "context_engine":
		return app.Failf("'%s' is a context engine: plugins.enabled does not activate it; select it with `hermes config set context.engine %s` (default: compressor)", p.Key, n)
	}
	return nil
}

// killed reports whether the catalog's kill list keeps p from loading (it names
// p, which was not installed with --allow-removed).
func killed(p *plugins.Plugin) bool { return p.Removal != nil && !p.Removal.Allowed }

// removedError refuses to act on a plugin the catalog's kill list keeps from
// loading, saying why and what the user can do.
func removedError(p *plugins.Plugin, what string) error {
	r := p.Removal
	return removedFail(p.Key, r.Date, r.ReasonText(), r.Source, what)
}

// removedFail is removedError's message from its parts: source is what to
// reinstall the plugin from ("" when unknown).
func removedFail(key, date, reason, source, what string) error {
	why := ": " + reason
	if date != "" {
		why = " on " + date + why
	}
	msg := fmt.Sprintf("Error: Plugin '%s' was removed from the Hermes plugin catalog%s\nIt %s: a removed plugin does not load.", key, why, what)
	if source != "" {
		msg += fmt.Sprintf(" If you have reviewed it and still want it, reinstall it deliberately:\n  hermes plugins install %s --force --allow-removed", source)
	} else {
		msg += " If it is a plugin of your own that only shares the name, rename it (its folder and the name in plugin.yaml)."
	}
	return app.Failf("%s", msg)
}

type disableOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string
}

func newCmdPluginsDisable(f *app.Factory, runF func(*disableOptions) error) *cobra.Command {
	opts := &disableOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "disable NAME",
		Short: "Remove a plugin from plugins.enabled and add it to plugins.disabled",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsDisableRun(cmd.Context(), opts)
		},
	}
}

func pluginsDisableRun(ctx context.Context, opts *disableOptions) error {
	return disablePlugin(ctx, opts.Factory, opts.Name)
}

// disablePlugin is `hermes plugins disable`, also what an update that turns
// out dangerous does.
func disablePlugin(ctx context.Context, f *app.Factory, name string) error {
	_, p, already, err := allowList(ctx, f, name, func(d *config.Doc, p *plugins.Plugin) (bool, error) {
		key := p.Key
		settings, _ := config.Plugins(d)
		if contains(settings.Disabled, key) && !contains(settings.Enabled, key) {
			return true, nil
		}
		for _, n := range uniq(key, leaf(key)) {
			if _, err := d.ListRemove("plugins.enabled", n); err != nil {
				return false, err
			}
		}
		_, err := d.ListAppend("plugins.disabled", key)
		return false, err
	})
	if err != nil {
		return err
	}
	if already {
		sayf(f.IO.Out, "Plugin '%s' is already disabled.\n", p.Key)
		return nil
	}
	sayf(f.IO.Out, "⊘ Plugin %s disabled. Takes effect on next session.\n", p.Key)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func uniq(items ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range items {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
