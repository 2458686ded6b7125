package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// pluginsCatalogCommands are search, browse and info, registered under `hermes plugins`.
func pluginsCatalogCommands(f *app.Factory) []*cobra.Command {
	return []*cobra.Command{newCmdPluginsSearch(f, nil), newCmdPluginsBrowse(f, nil), newCmdPluginsInfo(f, nil)}
}

// ---- search / browse ----------------------------------------------------------------

type searchOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Term       string // "": every plugin (browse)
	Capability string
	JSON       bool
	Refresh    bool
}

func newCmdPluginsSearch(f *app.Factory, runF func(*searchOptions) error) *cobra.Command {
	opts := &searchOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "search [TERM]",
		Short: "Search the plugin catalog and the community index (works offline)",
		Long: "Search the curated plugin catalog and the community plugin index by name, tags, description\n" +
			"and author (exact name first, then name, tag, description and author matches, then close spellings).\n" +
			"Listed is not audited: review a plugin's code before enabling it.\n\n" +
			"Sources: fresh cache ($HERMES_HOME/cache, catalog 6 h, index 24 h) → remote (plugins.catalog_url,\n" +
			"plugins.index_url) → stale cache → the catalog built into hermes. HERMES_OFFLINE=1 never fetches.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Term = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return pluginsSearchRun(cmd.Context(), opts)
		},
	}
	searchFlags(cmd, opts)
	return cmd
}

func searchFlags(cmd *cobra.Command, o *searchOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.Capability, "capability", "", "only plugins declaring this `CAP` (index labels such as tools, platform; catalog: tools, hooks, middleware, env)")
	fl.BoolVar(&o.JSON, "json", false, "machine-readable output")
	fl.BoolVar(&o.Refresh, "refresh", false, "fetch the catalog and index again instead of using the cache")
}

func newCmdPluginsBrowse(f *app.Factory, runF func(*searchOptions) error) *cobra.Command {
	opts := &searchOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "browse",
		Short: "List every plugin in the catalog and the community index",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pluginsSearchRun(cmd.Context(), opts)
		},
	}
	searchFlags(cmd, opts)
	return cmd
}

func pluginsSearchRun(ctx context.Context, opts *searchOptions) error {
	term := opts.Term
	c, err := opts.Factory.Catalog(ctx, opts.Refresh)
	if err != nil {
		return err
	}
	results := c.Search(term, opts.Capability)
	out := bufio.NewWriterSize(opts.IO.Out, 64<<10)
	defer out.Flush()
	src := c.SourceOf(results)
	if opts.JSON {
		return writeSearchJSON(out, c, term, results)
	}
	if len(results) == 0 {
		if opts.Capability != "" {
			sayf(out, "No plugins matched '%s' with capability '%s' (index source: %s)\n", term, opts.Capability, src)
		} else {
			sayf(out, "No plugins matched '%s' (index source: %s)\n", term, src)
		}
		return nil
	}
	t := &table{color: opts.Factory.Color()}
	t.header("Name", "Listed", "Description", "Author", "Tags")
	for _, r := range results {
		e := r.Entry
		listed := e.Tier
		if e.Origin == catalog.OriginIndex {
			listed = "index"
		}
		if _, gone := c.RemovedFor(e.Name, e.GitURL()); gone {
			listed += " REMOVED"
		}
		t.row(e.Name, listed, truncate(e.Description, 70), truncate(e.Author, 24), truncate(strings.Join(e.Tags, ", "), 40))
	}
	noun := "matches"
	if len(results) == 1 {
		noun = "match"
	}
	fmt.Fprintf(out, "Hermes plugins (%d %s)\n", len(results), noun)
	t.write(out)
	fmt.Fprintln(out)
	sayf(out, "Index source: %s. Install: hermes plugins install <name>   Details: hermes plugins info <name>\n", src)
	fmt.Fprintln(out, catalog.SecurityFooter)
	return nil
}

// writeSearchJSON writes upstream's {"source","query","results","note"} (plus
// "sources": where each part came from; "source" is where the results came
// from), indented like writeJSON, one result at a time through reused buffers:
// a thousand hits would otherwise build the whole document in fresh memory three
// times over (value, encoding, indentation), which costs more than the search.
func writeSearchJSON(out io.Writer, c *catalog.Catalog, term string, results []catalog.Result) error {
	jw := termsafe.NewJSONWriter(out) // as writeJSON: what a terminal would obey, \u-escaped
	var w io.Writer = jw
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	str := func(v string) string {
		buf.Reset()
		_ = enc.Encode(v)
		return strings.TrimRight(buf.String(), "\n")
	}
	fmt.Fprintf(w, "{\n  \"source\": %s,\n  \"sources\": {\n    \"catalog\": %s,\n    \"index\": %s\n  },\n  \"query\": %s,\n  \"results\": [",
		str(c.SourceOf(results)), str(c.CatalogSource), str(c.IndexSource), str(term))
	enc.SetIndent("    ", "  ")
	for i, r := range results {
		buf.Reset()
		if err := enc.Encode(entryJSON(c, r.Entry)); err != nil {
			return err
		}
		sep := ",\n    "
		if i == 0 {
			sep = "\n    "
		}
		io.WriteString(w, sep)
		w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	}
	if len(results) > 0 {
		io.WriteString(w, "\n  ")
	}
	enc.SetIndent("", "")
	if _, err := fmt.Fprintf(w, "],\n  \"note\": %s\n}\n", str(catalog.SecurityFooter)); err != nil {
		return err
	}
	return jw.Flush()
}

// indexEntryJSON is upstream's community-index entry.to_dict(), plus where it is listed.
type indexEntryJSON struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Author       string   `json:"author"`
	Tags         []string `json:"tags"`
	Repo         string   `json:"repo"`
	Ref          string   `json:"ref"`
	Subdir       *string  `json:"subdir"`
	Homepage     string   `json:"homepage"`
	Capabilities []string `json:"capabilities"`
	APIVersion   *int     `json:"api_version"`
	AddedAt      string   `json:"added_at"`
	Origin       string   `json:"origin"`
	Install      string   `json:"install"`
	Removed      *string  `json:"removed"`
}

// catalogEntryJSON is upstream's PluginCatalogEntry.to_dict(), plus where it is listed.
type catalogEntryJSON struct {
	Name           string          `json:"name"`
	Repo           string          `json:"repo"`
	SHA            string          `json:"sha"`
	Description    string          `json:"description"`
	Maintainer     string          `json:"maintainer"`
	Tier           string          `json:"tier"`
	RequiresHermes string          `json:"requires_hermes"`
	Subdir         string          `json:"subdir"`
	DocsURL        string          `json:"docs_url"`
	Platforms      []string        `json:"platforms"`
	Capabilities   catalogCapsJSON `json:"capabilities"`
	Category       string          `json:"category,omitempty"`
	Version        string          `json:"version,omitempty"`
	Tags           []string        `json:"tags,omitempty"`
	Origin         string          `json:"origin"`
	Install        string          `json:"install"`
	Removed        *string         `json:"removed"`
}

type catalogCapsJSON struct {
	ProvidesTools      []string `json:"provides_tools"`
	ProvidesHooks      []string `json:"provides_hooks"`
	ProvidesMiddleware []string `json:"provides_middleware"`
	RequiresEnv        []string `json:"requires_env"`
}

func entryJSON(c *catalog.Catalog, e *catalog.Entry) any {
	var removed *string
	if k, ok := c.RemovedFor(e.Name, e.GitURL()); ok {
		r := k.Reason
		if r == "" {
			r = "removed from the catalog"
		}
		removed = &r
	}
	install := "hermes plugins install " + e.Name
	if e.Origin == catalog.OriginIndex {
		out := indexEntryJSON{Name: e.Name, Description: e.Description, Author: e.Author, Tags: nonNil(e.Tags), Repo: e.Repo,
			Ref: e.Ref, Homepage: e.Homepage, Capabilities: nonNil(e.Labels), AddedAt: e.AddedAt, Origin: e.Origin,
			Install: install, Removed: removed}
		if e.Subdir != "" {
			out.Subdir = &e.Subdir
		}
		if e.APIVersion != 0 {
			v := e.APIVersion
			out.APIVersion = &v
		}
		return out
	}
	return catalogEntryJSON{Name: e.Name, Repo: e.Repo, SHA: e.Ref, Description: e.Description, Maintainer: e.Author,
		Tier: e.Tier, RequiresHermes: e.RequiresHermes, Subdir: e.Subdir, DocsURL: e.DocsURL, Platforms: nonNil(e.Platforms),
		Capabilities: catalogCapsJSON{nonNil(e.Tools), nonNil(e.Hooks), nonNil(e.Middleware), nonNil(e.Env)},
		Category:     e.Category, Version: e.Version, Tags: e.Tags, Origin: e.Origin, Install: install, Removed: removed}
}

// ---- info ---------------------------------------------------------------------------

type infoOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name    string
	JSON    bool
	Refresh bool
}

func newCmdPluginsInfo(f *app.Factory, runF func(*infoOptions) error) *cobra.Command {
	opts := &infoOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show a catalog entry: repo, pinned SHA, tier, what it registers, how to install (else the installed plugin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsInfoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&opts.Refresh, "refresh", false, "fetch the catalog and index again instead of using the cache")
	return cmd
}

func pluginsInfoRun(ctx context.Context, opts *infoOptions) error {
	f, name, w := opts.Factory, opts.Name, opts.IO.Out
	c, err := f.Catalog(ctx, opts.Refresh)
	if err != nil {
		return err
	}
	e, lerr := c.Lookup(name)
	le := &catalog.LookupError{}
	if lerr != nil && !errors.As(lerr, &le) {
		return lerr
	}
	if lerr != nil && le.Ambiguous {
		// Several plugins listed under one name: show each, so the user can pick a source.
		if opts.JSON {
			var all []any
			for i := range le.Candidates {
				all = append(all, entryJSON(c, &le.Candidates[i]))
			}
			return writeJSON(w, all)
		}
		sayf(w, "%d plugins are listed as '%s'; install one by its source.\n", len(le.Candidates), name)
		for i := range le.Candidates {
			fmt.Fprintln(w)
			writeEntryInfo(w, c, &le.Candidates[i], true)
		}
		return nil
	}
	if lerr != nil {
		// Not in the catalog: an installed or bundled plugin by that name (upstream's
		// fallback to show).
		if m, err := f.Host(ctx); err == nil {
			if _, err := m.Resolve(name); err == nil {
				m.Close()
				return pluginsShowRun(ctx, &showOptions{IO: opts.IO, Factory: f, Name: name, JSON: opts.JSON})
			}
			m.Close()
		}
		msg := fmt.Sprintf("Error: '%s' is neither in the plugin catalog nor installed. Browse entries with `hermes plugins search`.", safe(name))
		if k, ok := c.RemovedFor(name, ""); ok {
			msg = fmt.Sprintf("Error: '%s' was removed from the Hermes plugin catalog%s\nThe catalog no longer lists it, and it is not installed.", safe(name), safe(k.Why()))
		}
		for i, s := range le.Candidates {
			if i == 0 {
				msg += "\nDid you mean:"
			}
			msg += "\n  " + safe(s.Name) + "  (" + safe(s.Provenance()) + ")"
		}
		return app.Failf("%s", msg)
	}
	if opts.JSON {
		return writeJSON(w, entryJSON(c, e))
	}
	writeEntryInfo(w, c, e, false)
	return nil
}

func writeEntryInfo(w io.Writer, c *catalog.Catalog, e *catalog.Entry, bySource bool) {
	listed := "community index (metadata review only)"
	if e.Origin == catalog.OriginCatalog {
		listed = "curated catalog, " + e.Tier + " tier"
		if e.Tier == "official" {
			listed = "curated catalog, official"
		}
	}
	head := e.Name
	if e.Version != "" {
		head += " v" + e.Version
	}
	sayf(w, "%s  (%s)\n", head, listed)
	if e.Description != "" {
		fmt.Fprintln(w, safeText(e.Description))
	}
	if k, ok := c.RemovedFor(e.Name, e.GitURL()); ok {
		sayf(w, "\n⚠ REMOVED from the catalog%s: %s\n  Install is refused unless you pass --allow-removed.\n", dateSuffix(k.Date), orDefault(k.Reason, "no reason given"))
	}
	fmt.Fprintln(w)
	field := func(k, v string) {
		if v != "" {
			sayf(w, "%-13s %s\n", k+":", v)
		}
	}
	list := func(k string, v []string) { field(k, strings.Join(v, ", ")) }
	field("Repo", e.Repo)
	field("Subdir", e.Subdir)
	field("Version", e.Version)
	field("Pinned SHA", e.Ref)
	field("Tier", e.Tier)
	field("Maintainer", e.Author)
	field("Requires", e.RequiresHermes)
	list("Platforms", e.Platforms)
	field("Category", e.Category)
	field("Homepage", e.Homepage)
	field("Docs", e.DocsURL)
	field("Image", e.Image)
	list("Tags", e.Tags)
	if e.Origin == catalog.OriginIndex {
		list("Capabilities", e.Labels)
		field("Added", e.AddedAt)
		fmt.Fprintln(w, "Registers:    not declared (the index lists capability labels only; see the plugin's plugin.yaml)")
	} else {
		list("Tools", e.Tools)
		list("Hooks", e.Hooks)
		list("Middleware", e.Middleware)
		list("Env vars", e.Env)
		sayf(w, "\n%s\n", registersSummary(e))
	}
	field("Source", c.SourceOf([]catalog.Result{{Entry: e}}))
	fmt.Fprintln(w)
	if bySource {
		sayf(w, "Install:      hermes plugins install %s --ref %s\n", e.Identifier(), e.Ref)
	} else {
		sayf(w, "Install:      hermes plugins install %s\n", e.Name)
	}
	fmt.Fprintln(w, catalog.SecurityFooter)
}

func dateSuffix(d string) string {
	if d == "" {
		return ""
	}
	return " on " + d
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// registersSummary is upstream's entry_capability_summary sentence.
func registersSummary(e *catalog.Entry) string {
	var parts []string
	add := func(what string, v []string) {
		if len(v) > 0 {
			parts = append(parts, what+": "+strings.Join(v, ", "))
		}
	}
	add("tool(s)", e.Tools)
	add("hook(s)", e.Hooks)
	add("middleware", e.Middleware)
	add("requires env var(s)", e.Env)
	who := e.Tier
	if e.Author != "" {
		who += ", maintained by " + e.Author
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s (%s) declares no tools, hooks, middleware, or env vars.", e.Name, who)
	}
	return fmt.Sprintf("%s (%s) This plugin registers %s.", e.Name, who, strings.Join(parts, "; "))
}

// ---- install by bare name -----------------------------------------------------------

// catalogInstallRequest turns a bare catalog name into the install request for the
// entry's repo[#subdir] at its pinned SHA, with provenance for the metadata row. An
// explicit --ref wins and is recorded as a custom pin (catalog.pin ≠ catalog.sha).
// Unknown and ambiguous names are refused before anything is fetched; so are names
// on the kill list without --allow-removed, by the installer, which is given the
// kill list of the catalog just loaded.
func catalogInstallRequest(ctx context.Context, o *installOptions) (install.Request, error) {
	f, name := o.Factory, o.Identifier
	c, err := f.Catalog(ctx, false)
	if err != nil {
		return install.Request{}, err
	}
	e, err := c.Lookup(name)
	if err != nil {
		if le := (*catalog.LookupError)(nil); errors.As(err, &le) && !le.Ambiguous {
			if k, ok := c.RemovedFor(name, ""); ok {
				// Taken out of the catalog: say so, not "unknown name".
				return install.Request{}, app.Failf("Error: '%s' was removed from the Hermes plugin catalog%s\nThe catalog no longer lists it, so there is nothing to install by that name.", safe(name), safe(k.Why()))
			}
		}
		return install.Request{}, app.Failf("Error: %v", err)
	}
	ref := e.Ref
	if o.Ref != "" {
		r, err := install.ValidateRef(o.Ref)
		if err != nil {
			return install.Request{}, app.Failf("Error: %v", err)
		}
		ref = r
	}
	tier := e.Tier
	if e.Origin == catalog.OriginIndex {
		tier = "index"
	}
	sayf(f.IO.Out, "Resolved %s (%s) → %s @ %s\n", e.Name, e.Provenance(), e.Identifier(), e.Ref[:12])
	if ref != e.Ref {
		sayf(f.IO.Out, "Using your --ref %s instead of the listed pin (recorded as a custom pin).\n", ref[:12])
	}
	return install.Request{
		URL: e.GitURL(), Subdir: e.Subdir, Ref: ref, Force: o.Force, AllowRemoved: o.AllowRemoved, KillList: c.Removed,
		Catalog: &install.CatalogRef{Name: e.Name, Repo: e.GitURL(), Tier: tier, Pin: ref, SHA: e.Ref},
	}, nil
}

// ---- provenance in plugins list -------------------------------------------------------

// provenance reads each plugins directory's install metadata at most once per
// listing (one stat and one read, not one per plugin).
type provenance map[string]*install.Metadata // metadata path → rows (nil: none or unreadable)

// label is upstream's S1 source label for git installs with provenance:
// catalog:<tier>@<sha8> for catalog installs, git pinned@<sha8> for other pinned
// installs; "" when the install metadata says neither.
func (pv provenance) label(p *plugins.Plugin) string {
	c := p.Candidate
	if c.Source != "user" || c.Dir == "" {
		return ""
	}
	path := filepath.Join(filepath.Dir(c.Dir), install.MetadataFile)
	md, seen := pv[path]
	if !seen {
		md, _ = install.ReadMetadata(path)
		pv[path] = md
	}
	if md == nil {
		return ""
	}
	row, ok := md.Rows[filepath.Base(c.Dir)]
	if !ok || len(row.Revision) < 8 {
		return ""
	}
	switch {
	case row.Catalog != nil && row.Catalog.Tier != "":
		return "catalog:" + row.Catalog.Tier + "@" + row.Revision[:8]
	case row.Pinned:
		return "git pinned@" + row.Revision[:8]
	}
	return ""
}
