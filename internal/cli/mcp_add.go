package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/mcp"
)

type mcpAddOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name     string
	Server   mcp.Server
	Env      []string // K=V as typed
	Headers  []string // K=V as typed
	Replace  bool
	FromLink string
}

func newMCPAddCmd(f *app.Factory, runF func(*mcpAddOptions) error) *cobra.Command {
	opts := &mcpAddOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "add NAME -- CMD [ARGS...] | add NAME --url URL [--header K=V]... | add [NAME] --from-link URL",
		Short: "Add an MCP server to config.yaml (secrets go to .env, never into config.yaml)",
		Long: "Adds mcp_servers.NAME to config.yaml, keeping its comments and layout:\n\n" +
			"  hermes mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/notes   (stdio: the command after --)\n" +
			"  hermes mcp add docs --url https://example.com/mcp --header Authorization='Bearer …'   (streamable HTTP)\n" +
			"  hermes mcp add --from-link 'hermes://mcp/install?name=…&config=…'   (an \"Add to Hermes\" link, reviewed first)\n\n" +
			"A header or --env value that looks like a secret (Authorization, *token*, *key*, *secret*, *password*,\n" +
			"bearer values, ghp_…/sk-… keys) is stored in the profile's .env as MCP_<NAME>_<KEY>, and config.yaml\n" +
			"refers to it as ${MCP_<NAME>_<KEY>}; on a terminal you are asked first. NAME is 1-64 letters, digits, '.', '_', '-'.",
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			before := args
			if dash >= 0 {
				before = args[:dash]
			}
			switch {
			case opts.FromLink != "" && dash >= 0:
				return errors.New("--from-link takes the server from the link: give no command after --")
			case opts.FromLink != "" && len(before) > 1:
				return fmt.Errorf("too many arguments: hermes mcp add [NAME] --from-link URL")
			case opts.FromLink != "":
				return nil
			case len(before) == 0:
				return errors.New("give the server's NAME: hermes mcp add NAME -- CMD ARGS… or hermes mcp add NAME --url URL")
			case len(before) > 1:
				return fmt.Errorf("put -- before the server's command (so its own flags are not read as hermes'): hermes mcp add %s -- %s", before[0], strings.Join(before[1:], " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 {
				dash = len(args)
			}
			if dash > 0 {
				opts.Name = args[0]
			}
			if rest := args[dash:]; len(rest) > 0 {
				opts.Server.Command, opts.Server.Args = rest[0], rest[1:]
			}
			if opts.FromLink != "" {
				for _, fl := range []string{"url", "header", "env", "timeout", "connect-timeout", "trust", "disabled", "replace"} {
					if cmd.Flags().Changed(fl) {
						return app.FlagErrorf("--%s cannot be combined with --from-link: the link gives the whole server (edit it afterwards with hermes mcp add NAME --replace …)", fl)
					}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return mcpAddRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Server.URL, "url", "", "the server's streamable HTTP endpoint (http:// or https://)")
	fl.StringArrayVar(&opts.Headers, "header", nil, "an HTTP header `K=V` (repeatable; secret values go to .env)")
	fl.StringArrayVar(&opts.Env, "env", nil, "an environment variable `K=V` for a stdio server (repeatable; secret values go to .env)")
	fl.IntVar(&opts.Server.ConnectTimeout, "connect-timeout", 0, "seconds to wait for the server to connect (default 60)")
	fl.IntVar(&opts.Server.Timeout, "timeout", 0, "seconds a tool call may take (default: the client's)")
	fl.StringVar(&opts.Server.Trust, "trust", "", "full (default) or untrusted (every tool not marked read-only asks first)")
	fl.BoolVar(&opts.Server.Disabled, "disabled", false, "write it with enabled: false (configured, not connected)")
	fl.BoolVar(&opts.Replace, "replace", false, "overwrite a server of the same NAME")
	fl.StringVar(&opts.FromLink, "from-link", "", "add the server of a hermes://mcp/install link (shown first; same checks as open-url)")
	return cmd
}

func mcpAddRun(ctx context.Context, opts *mcpAddOptions) error {
	if opts.FromLink != "" {
		l, err := mcp.ParseLink(opts.FromLink)
		if err != nil {
			return app.Failf("Error: %v", err)
		}
		name := opts.Name
		if name == "" {
			name = l.Name
		} else if err := mcp.CheckName(name); err != nil {
			return app.FlagErrorf("%v", err)
		}
		// The user typed this command: without a terminal to ask, that is the yes.
		return addFromLink(ctx, opts.Factory, l, name, !opts.IO.CanPrompt())
	}
	s := opts.Server
	if err := mcp.CheckName(opts.Name); err != nil {
		return app.FlagErrorf("%v", err)
	}
	for _, set := range []struct {
		flag string
		raw  []string
		dst  *[]mcp.Pair
	}{{"env", opts.Env, &s.Env}, {"header", opts.Headers, &s.Headers}} {
		for _, r := range set.raw {
			p, err := mcp.ParsePair(set.flag, r)
			if err != nil {
				return app.FlagErrorf("%v", err)
			}
			*set.dst = append(*set.dst, p)
		}
	}
	if err := s.Check(); err != nil {
		return app.FlagErrorf("%v", err)
	}
	secrets, err := s.Secrets(opts.Name)
	if err != nil {
		return app.FlagErrorf("%v", err)
	}
	f := opts.Factory
	h, err := f.Home()
	if err != nil {
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	// Refuse before asking anything; Add checks again under the lock.
	if doc, err := (config.Store{Path: store.Path}).Load(); err != nil {
		return err
	} else if mcp.Exists(doc, opts.Name) && !opts.Replace {
		return app.Failf("Error: %v", &mcp.ExistsError{Name: opts.Name, Path: existingPath(doc, opts.Name)})
	}
	envShown := homeRel(f, h.EnvPath())
	w := opts.IO.Out
	if opts.IO.CanPrompt() {
		for _, sec := range secrets {
			yes, err := confirmDefaultYes(ctx, opts.IO, fmt.Sprintf("Store %s in %s as %s? [Y/n] ", sec.Key, envShown, sec.Var))
			if err != nil {
				return err
			}
			if !yes {
				return app.Failf("Not saved: config.yaml never holds a secret. Store %s in .env, or put your own variable in its place: --%s %s='${VAR}' (single quotes) with VAR set in %s.", sec.Key, sec.Kind, sec.Key, envShown)
			}
		}
	}
	for _, sec := range secrets {
		if err := config.SetDotenv(ctx, h.EnvPath(), sec.Var, sec.Value); err != nil {
			return err
		}
		why := ""
		if !opts.IO.CanPrompt() {
			why = " (no terminal to ask; a secret never goes into config.yaml)"
		}
		sayf(w, "Stored %s in %s as %s%s\n", sec.Key, envShown, sec.Var, why)
	}
	s.UseVars(secrets)
	return writeServer(ctx, f, opts.Name, s.Entry(), opts.Replace)
}

// writeServer adds the entry under the lock and prints what was written.
func writeServer(ctx context.Context, f *app.Factory, name string, e mcp.Entry, replace bool) error {
	store, err := f.Store()
	if err != nil {
		return err
	}
	var path string
	err = store.Update(ctx, func(d *config.Doc) error {
		var err error
		path, err = mcp.Add(d, name, e, replace)
		return err
	})
	var exists *mcp.ExistsError
	if errors.As(err, &exists) {
		return app.Failf("Error: %v", err)
	}
	if err != nil {
		return err
	}
	sayf(f.IO.Out, "Saved %s in %s:\n", path, store.Path)
	doc, err := config.Store{Path: store.Path}.Load()
	if err != nil {
		return err
	}
	if v, ok := doc.GetOrdered(path); ok {
		var b strings.Builder
		if err := printValue(&b, v); err != nil {
			return err
		}
		writeIndented(f.IO.Out, b.String(), "  ") // printValue made it terminal-safe
	}
	return nil
}

func writeIndented(w io.Writer, text, pad string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, pad+l)
	}
}

// existingPath is where name is configured, for the refusal's message.
func existingPath(d *config.Doc, name string) string {
	if _, ok := d.GetPath([]string{mcp.ServersKey, name}); ok {
		return config.JoinPath([]string{mcp.ServersKey, name})
	}
	return config.JoinPath([]string{"mcp", "servers", name})
}

// confirmDefaultYes asks a [Y/n] question: Enter or y is yes, anything else (and
// EOF) is no; an interrupt is no and ends the command (ctx's error, exit 130).
func confirmDefaultYes(ctx context.Context, io *app.IOStreams, prompt string) (bool, error) {
	sayf(io.Out, "%s", prompt)
	line, err := io.ReadLine(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(io.Out)
		return false, ctx.Err()
	}
	if err != nil && line == "" {
		fmt.Fprintln(io.Out)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "", "y", "yes":
		return true, nil
	}
	return false, nil
}

// homeRel shows p as ~/… when it is under HOME, as people write it.
func homeRel(f *app.Factory, p string) string {
	home := f.Env("HOME")
	if home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return "~/" + rel
	}
	return p
}

type mcpRemoveOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory
	Name    string
}

func newMCPRemoveCmd(f *app.Factory, runF func(*mcpRemoveOptions) error) *cobra.Command {
	opts := &mcpRemoveOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove an MCP server from config.yaml (its secrets in .env are left, and named)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return mcpRemoveRun(cmd.Context(), opts)
		},
	}
}

func mcpRemoveRun(ctx context.Context, opts *mcpRemoveOptions) error {
	f := opts.Factory
	h, err := f.Home()
	if err != nil {
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	var entry map[string]any
	var path string
	err = store.Update(ctx, func(d *config.Doc) error {
		var err error
		entry, path, err = mcp.Remove(d, opts.Name)
		return err
	})
	var unknown *mcp.UnknownError
	if errors.As(err, &unknown) {
		return app.Failf("Error: %v", err)
	}
	if err != nil {
		return err
	}
	w := opts.IO.Out
	sayf(w, "Removed %s from %s\n", path, store.Path)
	dotenv, err := config.ReadDotenv(h.EnvPath())
	if err != nil {
		return err
	}
	var kept []string
	for _, v := range mcp.EnvRefs(entry) {
		if _, ok := dotenv[v]; ok {
			kept = append(kept, v)
		}
	}
	if len(kept) > 0 {
		sayf(w, "Left in %s: %s (secrets are not deleted for you; remove those lines if nothing else uses them)\n", homeRel(f, h.EnvPath()), strings.Join(kept, ", "))
	}
	return nil
}

// openMCPLink is `hermes open-url` of a hermes://mcp/install link: the review,
// then a yes on a terminal; it never replaces a server.
func openMCPLink(ctx context.Context, f *app.Factory, raw string) error {
	l, err := mcp.ParseLink(raw)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	return addFromLink(ctx, f, l, l.Name, false)
}

// addFromLink shows the link's server and adds it under name after a yes on the
// terminal, or at once when typed is set (`hermes mcp add --from-link` without a
// terminal: the command line was the yes). An existing name is never replaced.
func addFromLink(ctx context.Context, f *app.Factory, l *mcp.Link, name string, typed bool) error {
	store, err := f.Store()
	if err != nil {
		return err
	}
	w := f.IO.Out
	fmt.Fprintf(w, "Add an MCP server from a %s:// link\n", l.Scheme)
	sayf(w, "  Name:      %s\n", name)
	if name != l.Name {
		sayf(w, "             (the link calls it %s)\n", l.Name)
	}
	sayf(w, "  Writes:    %s in %s\n", config.JoinPath([]string{mcp.ServersKey, name}), store.Path)
	fmt.Fprintln(w, "  Config:")
	writeIndented(w, safeText(l.Entry.PrettyJSON()), "    ")
	if cl := l.Entry.CommandLine(); cl != "" {
		sayf(w, "  ⚠ Warning: runs a local program: %s\n", cl)
		fmt.Fprintln(w, "             (with your permissions, whenever hermes connects to this server)")
	} else if u, ok := l.Entry.Get("url"); ok {
		sayf(w, "  Connects:  %s\n", fmt.Sprint(u))
	}
	trust := "full (the default: its tools run without asking)"
	if t, ok := l.Entry.Get("trust"); ok {
		switch t {
		case "full":
			trust = "full (the link asks for it: its tools run without asking)"
		case "untrusted":
			trust = "untrusted (tools not marked read-only ask first)"
		default:
			trust = fmt.Sprintf("%v (neither full nor untrusted: treated as untrusted)", t)
		}
	}
	sayf(w, "  Trust:     %s\n", trust)
	fmt.Fprintln(w, "An MCP server's tools are offered to the model. Add only servers you trust; a link never adds anything by itself.")

	doc, err := config.Store{Path: store.Path}.Load()
	if err != nil {
		return err
	}
	if mcp.Exists(doc, name) {
		return app.Failf("\nNot added: an MCP server named %q is already configured (%s), and a link never replaces one.\nTo add this one under another name, run:\n  hermes mcp add NEW-NAME --from-link '%s'\nor cancel (nothing was changed).", name, existingPath(doc, name), l.Raw)
	}
	if !typed {
		if !f.IO.CanPrompt() {
			return app.Failf("\nNot added: confirming a link needs a terminal. To add it yourself, run:\n  hermes mcp add --from-link '%s'", l.Raw)
		}
		fmt.Fprintln(w)
		yes, err := f.IO.Confirm(ctx, fmt.Sprintf("Add MCP server %s? [y/N]: ", name))
		if err != nil {
			return err
		}
		if !yes {
			return app.Failf("Aborted — nothing added.")
		}
	}
	return writeServer(ctx, f, name, l.Entry, false)
}
