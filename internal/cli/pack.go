package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/pack"
)

// catalogResolver resolves a pack's bare names through the merged catalog (loaded
// once, only when the pack has such entries). The pack's own ref is what gets
// installed; the listed pin is kept as provenance. Names on the kill list are not
// resolved: packs have no --allow-removed.
func catalogResolver(f *app.Factory) pack.Resolver {
	var c *catalog.Catalog
	return func(ctx context.Context, name string) (pack.Resolution, error) {
		if c == nil {
			var err error
			if c, err = f.Catalog(ctx, false); err != nil {
				return pack.Resolution{}, err
			}
		}
		e, err := c.Lookup(name)
		if err != nil {
			var le *catalog.LookupError
			if errors.As(err, &le) && !le.Ambiguous {
				return pack.Resolution{}, fmt.Errorf("'%s' is not in the plugin catalog; write the entry as repo: owner/repo", name)
			}
			return pack.Resolution{}, errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		if k, gone := c.RemovedFor(e.Name, e.GitURL()); gone {
			return pack.Resolution{}, fmt.Errorf("'%s' was removed from the plugin catalog: %s", e.Name, orDefault(k.Reason, "no reason given"))
		}
		tier := e.Tier
		if e.Origin == catalog.OriginIndex {
			tier = "index"
		}
		return pack.Resolution{
			Source:       install.Source{URL: e.GitURL(), Subdir: e.Subdir},
			Capabilities: catalogCaps(e),
			Catalog:      &install.CatalogRef{Name: e.Name, Repo: e.GitURL(), Tier: tier, SHA: e.Ref},
		}, nil
	}
}

// catalogCaps is the review's "Capabilities (declared)" cell for a catalog entry.
func catalogCaps(e *catalog.Entry) []string {
	var out []string
	for _, c := range []struct {
		what string
		n    int
	}{{"tools", len(e.Tools)}, {"hooks", len(e.Hooks)}, {"middleware", len(e.Middleware)}, {"env", len(e.Env)}} {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// newCmdPluginsPack is the `hermes plugins pack` group.
func newCmdPluginsPack(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Share a pinned set of plugins as one hermes-pack.yaml (show, install, export)",
		Long: "A plugin pack (hermes-pack.yaml) pins a set of plugins to exact commits, with optional non-secret\n" +
			"config seeds. `show` reviews one, `install` reviews, asks once, then installs each plugin through the\n" +
			"normal install path (scan, requires_env, per-plugin capability consent), `export` snapshots yours.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdPackShow(f, nil), newCmdPackInstall(f, nil), newCmdPackExport(f, nil))
	return cmd
}

type packShowOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Source string // a file or an https URL
}

func newCmdPackShow(f *app.Factory, runF func(*packShowOptions) error) *cobra.Command {
	opts := &packShowOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "show FILE-or-https-URL",
		Short: "Review a pack without installing anything (dry run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if runF != nil {
				return runF(opts)
			}
			return packShowRun(cmd.Context(), opts)
		},
	}
}

func packShowRun(ctx context.Context, opts *packShowOptions) error {
	p, err := loadPack(ctx, opts.Factory, opts.Source)
	if err != nil {
		return err
	}
	reviewPack(opts.Factory, p)
	sayf(opts.IO.Out, "\nDry run only — nothing was installed. Install with: hermes plugins pack install %s\n", opts.Source)
	return nil
}

type packInstallOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Source string // a file or an https URL
	Force  bool
}

func newCmdPackInstall(f *app.Factory, runF func(*packInstallOptions) error) *cobra.Command {
	opts := &packInstallOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "install FILE-or-https-URL",
		Short: "Review a pack, confirm once, then install each plugin through the normal install path",
		Long: "Shows the review screen, asks one confirmation for the pack, then installs and enables each plugin at its\n" +
			"pinned commit through the normal install path: security scan, requires_env prompts and the plugin's own\n" +
			"capability consent (never granted in bulk). Config seeds never replace a value you already have.\n" +
			"Needs a terminal: there is no --yes.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if runF != nil {
				return runF(opts)
			}
			return packInstallRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Force, "force", "f", false, "replace plugins that are already installed; install despite a caution scan verdict")
	return cmd
}

type packExportOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name        string
	EnabledOnly bool
}

func newCmdPackExport(f *app.Factory, runF func(*packExportOptions) error) *cobra.Command {
	opts := &packExportOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a pack of your git-installed plugins (and their non-secret settings) to stdout",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return packExportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.EnabledOnly, "enabled-only", false, "only plugins listed in plugins.enabled")
	cmd.Flags().StringVar(&opts.Name, "name", pack.DefaultExportName, "the pack's `NAME`")
	return cmd
}

func loadPack(ctx context.Context, f *app.Factory, src string) (*pack.Pack, error) {
	p, err := pack.Load(ctx, src, f.Cwd)
	if err != nil {
		return nil, app.Failf("Error: %v", err)
	}
	p.Resolve(ctx, catalogResolver(f))
	for _, w := range p.Warnings {
		f.Warn(w)
	}
	return p, nil
}

// entryName is what the review calls a plugin before it is installed.
func entryName(e *pack.Entry) string {
	if e.Name != "" {
		return e.Name
	}
	if e.Source.Subdir != "" {
		s := e.Source.Subdir
		return s[strings.LastIndex(s, "/")+1:]
	}
	return e.Source.RepoName()
}

// reviewPack is the mandatory review screen: every plugin, its source, pinned ref
// and declared capabilities, the config seeds and the skills list.
func reviewPack(f *app.Factory, p *pack.Pack) {
	w := f.IO.Out
	title := "Pack " + p.Name
	if p.Version != "" {
		title += " " + p.Version
	}
	if p.Author != "" {
		title += " by " + p.Author
	}
	sayf(w, "%s\n", title)
	if p.Description != "" {
		sayf(w, "  %s\n", p.Description)
	}
	sayf(w, "  from %s\n\n", p.Source)
	t := &table{color: f.Color()}
	t.header("Plugin", "Source", "Pinned ref", "Capabilities (declared)")
	for _, e := range p.Plugins {
		src := e.Identifier()
		if !e.Resolved() {
			src = "unresolved: " + e.ResolveError
		} else if e.Repo == "" {
			src = e.Source.Canonical()
		}
		caps := "read from plugin.yaml at install"
		if e.Capabilities != nil {
			caps = "—"
			if len(e.Capabilities) > 0 {
				caps = strings.Join(e.Capabilities, ", ")
			}
		}
		t.row(entryName(e), src, e.Ref[:12], caps)
		if !e.Resolved() {
			t.paintLast(1, ansiRed)
		}
	}
	t.write(w)
	if len(p.Config) > 0 {
		fmt.Fprintln(w, "\nConfig seeds (plugins.entries.<id>; values you already have are kept):")
		for _, id := range sortedMapKeys(p.Config) {
			for _, line := range flattenSeeds(p.Config[id], id) {
				sayf(w, "  %s\n", line)
			}
		}
	}
	if len(p.Skills) > 0 {
		sayf(w, "\nSkills listed (not installed: packs do not install skills): %s\n  Put each in $HERMES_HOME/skills/<name>/SKILL.md, then check it with: hermes skills list (and hermes skills show NAME)\n", strings.Join(p.Skills, ", "))
	}
}

func flattenSeeds(v any, prefix string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s = %s", prefix, seedValue(v))}
	}
	var out []string
	for _, k := range sortedMapKeys(m) {
		out = append(out, flattenSeeds(m[k], prefix+"."+k)...)
	}
	return out
}

func seedValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func packInstallRun(ctx context.Context, opts *packInstallOptions) error {
	f, src, force := opts.Factory, opts.Source, opts.Force
	p, err := loadPack(ctx, f, src)
	if err != nil {
		return err
	}
	reviewPack(f, p)
	w := opts.IO.Out
	if !opts.IO.CanPrompt() {
		return app.Failf("\nPack install requires an interactive terminal: you confirm the pack once and each plugin's capabilities yourself (there is no --yes in v1).\n"+
			"Review it with `hermes plugins pack show %s`, then run this command in a terminal.", src)
	}
	fmt.Fprintln(w)
	yes, err := f.IO.Confirm(ctx, fmt.Sprintf("Install %d plugin(s) from pack '%s'? [y/N] ", len(p.Plugins), p.Name))
	if err != nil {
		return err
	}
	if !yes {
		return app.Failf("Aborted — nothing installed.")
	}
	installed := map[string]bool{}
	failed := 0
	for i, e := range p.Plugins {
		if ctx.Err() != nil {
			break
		}
		sayf(w, "\n[%d/%d] %s\n", i+1, len(p.Plugins), entryName(e))
		if !e.Resolved() {
			sayf(w, "✗ %s: unresolved: %s\n", e.Label(), e.ResolveError)
			failed++
			continue
		}
		if name := alreadyInstalled(f, e); name != "" && !force {
			// Re-running a pack is idempotent: the same source at the same commit is
			// already what the pack asks for.
			sayf(w, "✓ %s is already installed from %s @ %s (use --force to reinstall)\n", name, e.Source.Canonical(), e.Ref[:12])
			installed[name] = true
			continue
		}
		req := install.Request{URL: e.Source.URL, Subdir: e.Source.Subdir, Ref: e.Ref, Force: force}
		if e.Catalog != nil {
			ref := *e.Catalog
			ref.Pin = e.Ref // the pack's pin; SHA stays the catalog's listed one
			req.Catalog = &ref
		}
		res, err := installAndSetUp(ctx, f, req, setupOptions{Enable: true})
		if err != nil && ctx.Err() != nil {
			// Interrupted (Ctrl-C, at a prompt or in git): stop at this plugin.
			if res != nil {
				installed[res.Name] = true
			}
			break
		}
		if err != nil {
			if res != nil {
				// Installed, but a later step (enable, consent) failed: it counts as failed.
				sayf(w, "✗ %s: installed as %s, but setting it up failed: %s\n", e.Label(), res.Name, errorText(err))
			} else {
				sayf(w, "✗ %s: %s\n", e.Label(), errorText(err))
			}
			failed++
			continue
		}
		installed[res.Name] = true
	}
	if ctx.Err() != nil {
		fmt.Fprintf(w, "\nPack '%s' interrupted: %d of %d plugin(s) installed; the rest and the config seeds were left alone.\n", p.Name, len(installed), len(p.Plugins))
		return &app.ExitError{Code: app.ExitInterrupted, Message: "interrupted"}
	}
	if len(p.Config) > 0 {
		if err := applySeeds(ctx, f, p, installed); err != nil {
			sayf(w, "✗ config seeds: %s\n", errorText(err))
		}
	}
	sayf(w, "\nPack '%s': %d installed, %d failed.\n", p.Name, len(installed), failed)
	if failed > 0 {
		return app.SilentExit(app.ExitFail)
	}
	return nil
}

// alreadyInstalled names the installed plugin whose metadata row records exactly
// this entry's source and commit, or "".
func alreadyInstalled(f *app.Factory, e *pack.Entry) string {
	h, err := f.Home()
	if err != nil {
		return ""
	}
	md, err := install.ReadMetadata(filepath.Join(h.PluginsDir(), install.MetadataFile))
	if err != nil {
		return ""
	}
	for _, name := range sortedMapKeys(md.Rows) {
		r := md.Rows[name]
		if r.Source == e.Source.Canonical() && strings.EqualFold(r.Revision, e.Ref) {
			if st, err := os.Stat(filepath.Join(h.PluginsDir(), name)); err == nil && st.IsDir() {
				return name
			}
		}
	}
	return ""
}

// errorText is the message of a CLI error without its "Error: " prefix.
func errorText(err error) string {
	var ec *app.ExitError
	if errors.As(err, &ec) {
		return strings.TrimPrefix(ec.Message, "Error: ")
	}
	return err.Error()
}

// applySeeds writes the pack's config seeds under plugins.entries.<id> for the
// plugins this run installed, through the comment-preserving store. A value the user
// already has always wins; each plugin's seeds are one locked update.
func applySeeds(ctx context.Context, f *app.Factory, p *pack.Pack, installed map[string]bool) error {
	// The factory's store: an edit of a file not yet migrated migrates it first.
	store, err := f.Store()
	if err != nil {
		return err
	}
	w := f.IO.Out
	fmt.Fprintln(w, "\nConfig seeds:")
	for _, id := range sortedMapKeys(p.Config) {
		if !installed[id] {
			sayf(w, "  %s: not applied (no plugin of that name was installed by this pack)\n", id)
			continue
		}
		var lines []string
		err := store.Update(ctx, func(d *config.Doc) error {
			lines = lines[:0]
			return seedInto(d, []string{"plugins", "entries", id}, p.Config[id], &lines)
		})
		if err != nil {
			sayf(w, "  %s: not applied: %v\n", id, err)
			continue
		}
		for _, l := range lines {
			sayf(w, "  %s\n", l)
		}
	}
	return nil
}

// seedInto sets each seed leaf that the document does not have yet. Mappings merge
// key by key; anything else the user has (a scalar, a list, null) is kept whole.
func seedInto(d *config.Doc, base []string, seeds map[string]any, lines *[]string) error {
	for _, k := range sortedMapKeys(seeds) {
		path := append(append([]string(nil), base...), k)
		shown := strings.Join(path[2:], ".")
		v := seeds[k]
		cur, exists := d.GetPath(path)
		if !exists {
			if err := d.SetPath(path, v); err != nil {
				return err
			}
			for _, l := range flattenSeeds(v, shown) {
				*lines = append(*lines, "✓ "+l)
			}
			continue
		}
		sub, seedIsMap := v.(map[string]any)
		if _, curIsMap := cur.(map[string]any); seedIsMap && curIsMap {
			if err := seedInto(d, path, sub, lines); err != nil {
				return err
			}
			continue
		}
		*lines = append(*lines, fmt.Sprintf("• %s already set — keeping your value", shown))
	}
	return nil
}

func packExportRun(_ context.Context, opts *packExportOptions) error {
	f, name, enabledOnly := opts.Factory, opts.Name, opts.EnabledOnly
	h, err := f.Home()
	if err != nil {
		return err
	}
	md, err := install.ReadMetadata(filepath.Join(h.PluginsDir(), install.MetadataFile))
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	doc, err := store.Load()
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	settings, _ := config.Plugins(doc)
	var list []pack.Installed
	for _, n := range install.Installed(h.PluginsDir()) {
		if enabledOnly && (!contains(settings.Enabled, n) || contains(settings.Disabled, n)) {
			continue
		}
		pl := pack.Installed{Name: n}
		if r, ok := md.Rows[n]; ok {
			pl.Row = &r
		}
		list = append(list, pl)
	}
	entries, _ := doc.Get("plugins.entries")
	em, _ := entries.(map[string]any)
	ex, err := pack.ExportPack(name, list, em)
	if err != nil {
		return err
	}
	for _, s := range ex.Skipped {
		f.Warn("not exported: " + s)
	}
	if len(ex.Stripped) > 0 {
		f.Warn("left out secret-shaped or reserved config keys: " + strings.Join(ex.Stripped, ", "))
	}
	_, err = opts.IO.Out.Write(ex.YAML)
	return err
}
