package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/mcp"
	"github.com/hermes-go/hermes/internal/urlscheme"
)

// openURLCloneBase is where a link's owner/repo is cloned from. Links only ever
// name GitHub repositories; tests point this at a local directory of bare repos.
var openURLCloneBase = "https://github.com/"

type openURLOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory
	// CloneBase is where the link's owner/repo is cloned from (openURLCloneBase).
	CloneBase string

	URL      string
	Register bool
	Wait     bool
}

func newCmdOpenURL(f *app.Factory, runF func(*openURLOptions) error) *cobra.Command {
	opts := &openURLOptions{IO: f.IO, Factory: f, CloneBase: openURLCloneBase}
	cmd := &cobra.Command{
		Use:   "open-url URL | --register",
		Short: "Handle a hermes:// plugin install link (shows it and installs only after you confirm)",
		Long: "Handles one-click plugin links from web pages and READMEs:\n\n" +
			"  hermes://plugin/install?repo=owner/repo[&enable=1][&force=1]   (force=1: replace an installed one)\n" +
			"  hermes://plugin-agent/owner/repo   (legacy)      hermes-dev://…   (dev builds)\n" +
			"  hermes://mcp/install?name=NAME&config=BASE64URL-JSON   (an MCP server; never replaces one)\n\n" +
			"It shows the repository, what will be installed and where to read the source, and installs only\n" +
			"after an explicit yes on a terminal; without one it prints the equivalent `hermes plugins install`.\n" +
			"--register writes ~/.local/share/applications/hermes-url-handler.desktop so the desktop (XDG)\n" +
			"opens these links with hermes in a terminal.",
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Register {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.URL = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return openURLRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Register, "register", false, "install the XDG desktop entry for hermes:// and hermes-dev:// links")
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait for Enter before exiting (used by the desktop entry)")
	_ = cmd.Flags().MarkHidden("wait") // the flag exists: no error
	return cmd
}

func openURLRun(ctx context.Context, opts *openURLOptions) error {
	if opts.Register {
		return registerURLHandler(ctx, opts.Factory)
	}
	err := openURL(ctx, opts)
	if opts.Wait && opts.IO.CanPrompt() && ctx.Err() == nil {
		// Launched by the desktop in a terminal window that closes on exit.
		if err != nil {
			fmt.Fprintln(opts.IO.Out, safeText(errorText(err)))
			err = app.SilentExit(app.ExitFail)
		}
		fmt.Fprint(opts.IO.Out, "\nPress Enter to close this window.")
		_, _ = opts.IO.ReadLine(ctx)
	}
	return err
}

// equivalentInstall is the command a user can run instead of the link.
func equivalentInstall(l *urlscheme.Link) string {
	s := "hermes plugins install " + l.Slug()
	if l.Enable != nil {
		if *l.Enable {
			s += " --enable"
		} else {
			s += " --no-enable"
		}
	}
	if l.Force {
		s += " --replace" // not --force: that also skips a caution verdict's question
	}
	return s
}

func openURL(ctx context.Context, opts *openURLOptions) error {
	f := opts.Factory
	if mcp.IsLink(opts.URL) {
		return openMCPLink(ctx, f, opts.URL)
	}
	l, err := urlscheme.Parse(opts.URL)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	h, err := f.Home()
	if err != nil {
		return err
	}
	w := f.IO.Out
	fmt.Fprintln(w, "Install a plugin from a hermes:// link")
	sayf(w, "  Repository:  %s\n", l.Slug())
	sayf(w, "  Browse:      %s   (read the code before you say yes)\n", l.BrowseURL())
	sayf(w, "  Clone URL:   %s\n", l.CloneURL())
	sayf(w, "  Installs:    the default branch, into %s, after the install-time security scan;\n", h.PluginsDir())
	fmt.Fprintln(w, "               its requires_env values and capabilities are asked for as with `hermes plugins install`")
	switch {
	case l.Enable == nil:
		fmt.Fprintln(w, "  Enable:      you will be asked after it is installed")
	case *l.Enable:
		fmt.Fprintln(w, "  Enable:      yes, right after installing (the link asks for enable=1)")
	default:
		fmt.Fprintln(w, "  Enable:      no (the link says enable=0)")
	}
	if l.Force {
		fmt.Fprintln(w, "  Replace:     an existing plugin of the same name (the link asks for force=1). That is all force=1 does:")
		fmt.Fprintln(w, "               the scan and any confirmation it needs, the env and capability prompts and this question still apply")
	}
	sayf(w, "  Catalog:     %s\n", catalogNote(ctx, f, l))
	if l.Kind != "plugin" {
		sayf(w, "  Link form:   legacy %s://%s/…\n", l.Scheme, l.Kind)
	}
	fmt.Fprintln(w, "A plugin runs code on this machine with your permissions. Install only what you trust; a link never installs by itself.")
	if !f.IO.CanPrompt() {
		return app.Failf("\nNot installed: confirming a link needs a terminal. To install it yourself, run:\n  %s", equivalentInstall(l))
	}
	fmt.Fprintln(w)
	yes, err := f.IO.Confirm(ctx, fmt.Sprintf("Install %s? [y/N]: ", l.Slug()))
	if err != nil {
		return err
	}
	if !yes {
		return app.Failf("Aborted — nothing installed.")
	}
	o := setupOptions{}
	if l.Enable != nil {
		o.Enable, o.NoEnable = *l.Enable, !*l.Enable
	}
	// force=1 may replace an install and nothing more: a link never skips the
	// caution question (install.Request.Force would).
	req := install.Request{URL: opts.CloneBase + l.Slug() + ".git", Replace: l.Force}
	_, err = installAndSetUp(ctx, f, req, o)
	return err
}

// catalogNote says whether the linked repository is listed in the plugin catalog,
// which helps the user decide (listed means metadata-reviewed, not audited).
func catalogNote(ctx context.Context, f *app.Factory, l *urlscheme.Link) string {
	c, err := f.Catalog(ctx, false)
	if err != nil {
		return "could not be read"
	}
	want := strings.ToLower(strings.TrimSuffix(l.CloneURL(), ".git"))
	all := c.All()
	for i := range all {
		e := &all[i]
		if e.Subdir == "" && strings.ToLower(strings.TrimSuffix(strings.TrimRight(e.GitURL(), "/"), ".git")) == want {
			return fmt.Sprintf("listed as %s (%s, reviewed pin %s); this link installs the default branch instead, `hermes plugins install %s` the pin", e.Name, e.Provenance(), e.Ref[:12], e.Name)
		}
	}
	return "not listed (listing is a metadata review, not an audit, either way)"
}

// registerURLHandler writes the desktop entry and makes it the default handler
// through xdg-mime when that tool exists.
func registerURLHandler(ctx context.Context, f *app.Factory) error {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return app.Failf("Error: --register writes an XDG desktop entry (Linux and other freedesktop systems); on %s, Hermes Desktop registers hermes:// links.", runtime.GOOS)
	}
	exe, err := os.Executable()
	if err != nil {
		return app.Failf("Error: cannot find the hermes binary to register: %v", err)
	}
	r, err := urlscheme.Register(ctx, f.Env, exe)
	if r.Entry != "" {
		sayf(f.IO.Out, "✓ Wrote %s (runs %s open-url in a terminal)\n", r.Entry, exe)
	}
	switch {
	case err != nil:
		return app.Failf("Error: %v", err)
	case r.NoXDGMime:
		sayf(f.IO.Out, "xdg-mime is not installed, so the default handler was not set. Desktops that read MimeType= from %s pick the entry up; otherwise install xdg-utils and run:\n  xdg-mime default %s %s\n", r.Dir, urlscheme.DesktopFile, strings.Join(urlscheme.MimeTypes, " "))
		return nil
	}
	sayf(f.IO.Out, "✓ hermes:// and hermes-dev:// links now open with %s (xdg-mime default)\n", urlscheme.DesktopFile)
	return nil
}
