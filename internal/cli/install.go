package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/scan"
)

// pluginScanner is the install-time security scanner (internal/scan); nil skips
// scanning with a note.
var pluginScanner install.Scanner = install.ScannerFunc(scanForInstall)

// scanForInstall adapts internal/scan to the install path.
func scanForInstall(ctx context.Context, dir string, t install.ScanTarget) (*install.ScanReport, error) {
	res, err := scan.Scan(ctx, dir, scan.Options{RequiresEnv: t.RequiresEnv, Source: t.Source})
	if err != nil {
		return nil, err
	}
	if t.Name != "" {
		res.Name = t.Name
	}
	rep := &install.ScanReport{Verdict: res.Verdict, Report: res.Report(), Findings: len(res.Findings)}
	for _, f := range res.Blocking() {
		rep.Blocking = append(rep.Blocking, fmt.Sprintf("%s %s %s:%d %s (%s)", strings.ToUpper(f.Severity), f.PatternID, f.File, f.Line, f.Description, f.Match))
	}
	return rep, nil
}

// pluginsInstallCommands are install, update, remove, capabilities and
// repair-metadata, registered under `hermes plugins`.
func pluginsInstallCommands(app *App) []*cobra.Command {
	return []*cobra.Command{
		newPluginsInstallCmd(app), newPluginsUpdateCmd(app), newPluginsRemoveCmd(app),
		newPluginsCapabilitiesCmd(app), newPluginsRepairMetadataCmd(app),
	}
}

// installer builds the installer for this invocation's HERMES_HOME.
func (a *App) installer() (*install.Installer, error) {
	h, err := a.Home()
	if err != nil {
		return nil, err
	}
	g := &install.Git{Env: a.Env}
	in := &install.Installer{
		PluginsDir:  h.PluginsDir(),
		Git:         g,
		Credentials: &install.Credentials{Env: a.Env, DotenvPath: h.EnvPath(), Git: g},
		Scanner:     pluginScanner,
		Log:         a.IO.Err,
	}
	if a.IO.ErrTTY {
		in.Progress = a.spinner
	}
	return in, nil
}

// scanOnInstall reads plugins.scan_on_install; an unreadable config keeps scanning on.
func (a *App) scanOnInstall() bool {
	h, err := a.Home()
	if err != nil {
		return true
	}
	doc, err := config.Store{Path: h.ConfigPath()}.Load()
	if err != nil {
		return true
	}
	s, _ := config.Plugins(doc)
	return s.ScanOnInstall
}

// spinner shows progress on a terminal only; the returned func ends it.
func (a *App) spinner(msg string) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(a.IO.Err, "\r%s %s", frames[i%len(frames)], msg)
			select {
			case <-stop:
				fmt.Fprintf(a.IO.Err, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// installFail turns an installer error into the CLI's exit-1 message.
func installFail(err error) error {
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return err
	}
	return failf("Error: %v", err)
}

// ---- install ----------------------------------------------------------------------

type installOptions struct {
	ref              string
	force            bool
	enable, noEnable bool
	skipEnv, noGrant bool
	allowRemoved     bool
}

func newPluginsInstallCmd(app *App) *cobra.Command {
	var o installOptions
	cmd := &cobra.Command{
		Use:   "install IDENTIFIER",
		Short: "Install a plugin by catalog name or from git (owner/repo[/subdir], a git URL, URL#subdir)",
		Long: "Install a plugin from git into $HERMES_HOME/plugins.\n\n" +
			"IDENTIFIER is a catalog name (hermes plugins search; installed at its reviewed, pinned commit),\n" +
			"owner/repo (GitHub), owner/repo/path/to/plugin, a git URL (https://, ssh://,\n" +
			"git@host:, file://) optionally with #subdir, or a GitHub browser URL (…/tree/<branch>/<path>).\n" +
			"--ref pins a full 40-character commit SHA; without it the default branch is installed.\n" +
			"Private https repositories use GITHUB_TOKEN/GH_TOKEN ($HERMES_HOME/.env, GitHub only), `gh auth token`,\n" +
			"then git credential helpers; ssh sources use the ssh agent.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginsInstall(cmd.Context(), app, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ref, "ref", "", "install exactly this commit (full 40-character `SHA`) and pin it")
	f.BoolVarP(&o.force, "force", "f", false, "replace an existing plugin of the same name; install despite a caution scan verdict")
	f.BoolVar(&o.enable, "enable", false, "enable the plugin after installing (no prompt)")
	f.BoolVar(&o.noEnable, "no-enable", false, "leave the plugin not enabled (no prompt)")
	f.BoolVar(&o.skipEnv, "skip-env", false, "do not ask for requires_env values (list the missing ones)")
	f.BoolVar(&o.noGrant, "no-grant", false, "do not ask for capability consent (declared capabilities stay off)")
	f.BoolVar(&o.allowRemoved, "allow-removed", false, "install a catalog name even though it is on the catalog's kill list")
	cmd.MarkFlagsMutuallyExclusive("enable", "no-enable")
	return cmd
}

func pluginsInstall(ctx context.Context, app *App, identifier string, o installOptions) error {
	req := install.Request{Identifier: identifier, Ref: o.ref, Force: o.force}
	// A bare name (no '/', no scheme) is a catalog name; owner/repo and URLs never
	// touch the catalog (catalog.go).
	if catalog.IsBareName(identifier) {
		var err error
		if req, err = catalogInstallRequest(ctx, app, identifier, o); err != nil {
			return err
		}
	}
	_, err := installAndSetUp(ctx, app, req, o)
	return err
}

// installAndSetUp runs one install.Request through the whole CLI path: the scan
// setting and the caution question on a terminal, the install itself, requires_env
// prompts, the enable decision (o.enable / o.noEnable, else a prompt on a terminal)
// and capability consent. Catalog and pack commands call it once per plugin with a
// Request carrying URL, Subdir, Ref and Catalog provenance; o.ref and o.force are
// not read (they are in req).
func installAndSetUp(ctx context.Context, app *App, req install.Request, o installOptions) (*install.Result, error) {
	in, err := app.installer()
	if err != nil {
		return nil, err
	}
	req.ScanDisabled = req.ScanDisabled || !app.scanOnInstall()
	if app.IO.CanPrompt() && req.ConfirmCaution == nil {
		req.ConfirmCaution = func(rep *install.ScanReport) bool {
			fmt.Fprintln(app.IO.Out, "⚠ Security scan flagged this plugin:")
			fmt.Fprintln(app.IO.Out, strings.TrimRight(rep.Report, "\n"))
			return app.confirm("  Install anyway? Only continue if you trust the source. [y/N]: ")
		}
	}
	res, err := in.Install(ctx, req)
	if err != nil {
		return nil, installFail(err)
	}
	w := app.IO.Out
	for _, warn := range res.Warnings {
		app.warn(warn)
	}
	if res.Scan != nil && res.Scan.Verdict != install.VerdictSafe && res.Scan.Report != "" && (req.Force || !app.IO.CanPrompt()) {
		fmt.Fprintln(app.IO.Err, strings.TrimRight(res.Scan.Report, "\n"))
	}
	for _, c := range res.Created {
		fmt.Fprintf(w, "Created %s from %s.example\n", c, c)
	}
	pin := ""
	if res.Pinned {
		pin = ", pinned"
	}
	verb := "Installed"
	if res.Replaced {
		verb = "Reinstalled"
	}
	fmt.Fprintf(w, "✓ %s %s from %s @ %s%s\n", verb, res.Name, res.Source.Canonical(), res.Revision[:12], pin)
	fmt.Fprintf(w, "  Location: %s\n", res.Dir)
	if b, err := os.ReadFile(filepath.Join(res.Dir, "after-install.md")); err == nil {
		fmt.Fprintf(w, "\n%s\n\n", strings.TrimRight(string(b), "\n"))
	}
	if deps := res.Manifest.PythonDependencies; len(deps) > 0 {
		fmt.Fprintf(w, "%s declares Python dependencies (not installed automatically): %s\n  Install them with: pip install %s\n", res.Name, strings.Join(deps, ", "), strings.Join(deps, " "))
	}
	if err := promptRequiresEnv(ctx, app, res.Name, res.Manifest, o.skipEnv); err != nil {
		return res, err
	}

	enable := o.enable
	if !o.enable && !o.noEnable {
		if app.IO.CanPrompt() {
			enable = app.confirm(fmt.Sprintf("  Enable '%s' now? [y/N]: ", res.Name))
		} else {
			fmt.Fprintf(w, "Not enabled. Enable it with: hermes plugins enable %s\n", res.Name)
		}
	}
	// --no-grant: the consent step runs as it would without a terminal (fail closed).
	if o.noGrant && app.IO.InTTY {
		app.IO.InTTY = false
		defer func() { app.IO.InTTY = true }()
	}
	if enable {
		return res, pluginsEnable(ctx, app, res.Name, enableOptions{}, false, false)
	}
	declared := capability.KnownOnly(res.Manifest.Capabilities)
	if len(declared) == 0 {
		return res, nil
	}
	m, p, err := resolveInstalled(app, res.Name)
	if err != nil {
		return res, err
	}
	return res, runCapabilityConsent(ctx, app, m, p.Key, declared, "requests")
}

// resolveInstalled finds a just-installed or updated plugin through discovery.
func resolveInstalled(app *App, name string) (*plugins.Manager, *plugins.Plugin, error) {
	m, err := app.Manager()
	if err != nil {
		return nil, nil, err
	}
	p, err := m.Resolve(name)
	if err != nil {
		return nil, nil, failf("%v", err)
	}
	return m, p, nil
}

// promptRequiresEnv asks for requires_env values that are set neither in the
// environment nor in $HERMES_HOME/.env, on a terminal only, and saves them to .env
// (mode 0600). Secret values are read without echo.
func promptRequiresEnv(ctx context.Context, app *App, name string, m *manifest.Manifest, skip bool) error {
	h, err := app.Home()
	if err != nil {
		return err
	}
	dotenv, err := config.ReadDotenv(h.EnvPath())
	if err != nil {
		dotenv = map[string]string{}
	}
	var missing []manifest.EnvVar
	for _, e := range m.RequiresEnv {
		if app.Env(e.Name) == "" && dotenv[e.Name] == "" {
			missing = append(missing, e)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, len(missing))
	for i, e := range missing {
		names[i] = e.Name
	}
	if skip || !app.IO.CanPrompt() {
		fmt.Fprintf(app.IO.Out, "%s needs environment variable(s) that are not set: %s\n  Add them to %s (or the environment) before enabling it.\n", name, strings.Join(names, ", "), h.EnvPath())
		return nil
	}
	fmt.Fprintf(app.IO.Out, "%s needs these environment variables (saved to %s; leave empty to skip):\n", name, h.EnvPath())
	for _, e := range missing {
		label := e.Name
		if e.Description != "" {
			label += " (" + e.Description + ")"
		}
		if e.URL != "" {
			fmt.Fprintf(app.IO.Out, "  Get it at: %s\n", e.URL)
		}
		fmt.Fprintf(app.IO.Out, "  %s: ", label)
		var val string
		var rerr error
		if e.Secret || secretName(e.Name) {
			val, rerr = readNoEcho(app.IO.In)
			fmt.Fprintln(app.IO.Out)
		} else {
			val, rerr = readLine(app.IO.In)
		}
		val = strings.TrimRight(val, "\r\n")
		if rerr != nil && val == "" {
			fmt.Fprintln(app.IO.Out, "\nSkipped the remaining variables.")
			return nil
		}
		if strings.TrimSpace(val) == "" {
			continue
		}
		if err := config.SetDotenv(ctx, h.EnvPath(), e.Name, val); err != nil {
			return err
		}
		fmt.Fprintf(app.IO.Out, "  ✓ Saved %s to %s\n", e.Name, h.EnvPath())
	}
	return nil
}

// secretName treats variables named like credentials as secret even without
// secret: true, so they are never echoed.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// readLine reads one line a byte at a time, so no later prompt's answer is
// swallowed into a buffer (stdin may be a pipe feeding several answers).
func readLine(in io.Reader) (string, error) {
	var b []byte
	var c [1]byte
	for {
		n, err := in.Read(c[:])
		if n == 1 {
			b = append(b, c[0])
			if c[0] == '\n' {
				return string(b), nil
			}
		}
		if err != nil {
			return string(b), err
		}
	}
}

// readNoEcho reads one line with terminal echo off when in is a terminal.
func readNoEcho(in io.Reader) (string, error) {
	if off := echoOff(in); off != nil {
		defer off()()
	}
	return readLine(in)
}

// echoOff returns what turns in's echo off and gives back the function that
// turns it on again, or nil when in is not a terminal.
func echoOff(in io.Reader) func() (restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return nil
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err != nil {
		return nil
	}
	return func() func() {
		old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err != nil {
			return func() {}
		}
		quiet := *old
		quiet.Lflag &^= unix.ECHO
		if unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet) != nil {
			return func() {}
		}
		return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
	}
}

// ---- update -----------------------------------------------------------------------

func newPluginsUpdateCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "update NAME",
		Short: "Pull the latest commit of a git-installed plugin (local edits are autostashed and re-applied)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return pluginsUpdate(cmd.Context(), app, args[0]) },
	}
}

func pluginsUpdate(ctx context.Context, app *App, name string) error {
	in, err := app.installer()
	if err != nil {
		return err
	}
	w := app.IO.Out
	fmt.Fprintf(w, "Updating %s...\n", name)
	res, err := in.Update(ctx, install.UpdateRequest{Name: name, ScanDisabled: !app.scanOnInstall()})
	if err != nil && res == nil {
		return installFail(err)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, n)
	}
	for _, c := range res.Created {
		fmt.Fprintf(w, "Created %s from %s.example\n", c, c)
	}
	if err != nil {
		return installFail(err)
	}
	m, p, rerr := resolveInstalled(app, name)
	if res.Scan != nil && res.Scan.Verdict != install.VerdictSafe {
		fmt.Fprintln(w, "⚠ Security scan flagged the updated plugin:")
		fmt.Fprintln(w, strings.TrimRight(res.Scan.Report, "\n"))
		if res.Scan.Verdict == install.VerdictDangerous {
			for _, b := range res.Scan.Blocking {
				fmt.Fprintf(w, "  %s\n", b)
			}
			if rerr != nil {
				return rerr
			}
			if err := pluginsDisable(ctx, app, p.Key); err != nil {
				return err
			}
			return failf("Plugin '%s' has been disabled. Review the findings, then re-enable with `hermes plugins enable %s` if you trust it. (Scanning can be turned off with plugins.scan_on_install: false in config.yaml.)", p.Key, p.Key)
		}
	}
	if res.UpToDate {
		fmt.Fprintf(w, "✓ Plugin %s is already up to date.\n", name)
	} else {
		fmt.Fprintf(w, "✓ Plugin %s updated (%s → %s).\n", name, res.Before[:12], res.After[:12])
	}
	if rerr != nil || res.Manifest == nil {
		return nil
	}
	// Capabilities the update newly declares stay off until consented.
	declared := capability.KnownOnly(res.Manifest.Capabilities)
	if len(declared) == 0 {
		return nil
	}
	doc, err := m.Store().Load()
	if err != nil {
		return err
	}
	pending := capability.Pending(doc.Map(), p.Key, declared)
	if len(pending) == 0 && !capability.DeclaredSetChanged(doc.Map(), p.Key, declared) {
		return nil
	}
	// Nothing new to grant (the set shrank, or only changed to held ids): the
	// consent flow just records the new declared-set hash, without asking.
	if len(pending) > 0 && !app.IO.CanPrompt() {
		fmt.Fprintf(w, "Plugin %s has new capabilities (%s); review them with `hermes plugins capabilities %s` and grant them with `hermes plugins enable %s` on a terminal. Until then they stay off.\n", p.Key, strings.Join(pending, ", "), p.Key, p.Key)
		return nil
	}
	return runCapabilityConsent(ctx, app, m, p.Key, declared, "now requests")
}

// ---- remove -----------------------------------------------------------------------

func newPluginsRemoveCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm", "uninstall"},
		Short:   "Delete an installed plugin's folder and its install metadata row",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := app.installer()
			if err != nil {
				return err
			}
			if err := in.Remove(cmd.Context(), args[0]); err != nil {
				return installFail(err)
			}
			fmt.Fprintf(app.IO.Out, "✗ Plugin %s removed from %s\n", args[0], in.PluginsDir)
			return nil
		},
	}
}

// ---- repair-metadata ----------------------------------------------------------------

func newPluginsRepairMetadataCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "repair-metadata",
		Short: "Move a corrupt plugins/.install-metadata.json aside and rebuild it from the git checkouts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := app.installer()
			if err != nil {
				return err
			}
			backup, names, skipped, err := in.RepairMetadata(cmd.Context())
			if err != nil {
				return installFail(err)
			}
			if backup == "" {
				fmt.Fprintln(app.IO.Out, "Install metadata is readable; nothing to repair.")
				return nil
			}
			fmt.Fprintf(app.IO.Out, "Moved the corrupt metadata to %s\n", backup)
			fmt.Fprintf(app.IO.Out, "Rebuilt %d row(s) from git checkouts: %s\n", len(names), strings.Join(names, ", "))
			if len(skipped) > 0 {
				fmt.Fprintf(app.IO.Out, "Not rebuilt (no git checkout to read provenance from): %s\n  Their rows are only in the moved file; reinstall them with `hermes plugins install <source> --force` to record them again.\n", strings.Join(skipped, ", "))
			}
			fmt.Fprintln(app.IO.Out, "Detached checkouts were recorded as pinned. Compare with the old file and fix by hand if needed.")
			return nil
		},
	}
}

// ---- capabilities -----------------------------------------------------------------

func newPluginsCapabilitiesCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "capabilities [NAME]",
		Short: "Show the capabilities plugins declare and which are granted",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return pluginsCapabilities(app, name)
		},
	}
}

func pluginsCapabilities(app *App, name string) error {
	m, err := app.Manager()
	if err != nil {
		return err
	}
	list := m.Plugins()
	if name != "" {
		p, err := m.Resolve(name)
		if err != nil {
			return failf("%v", err)
		}
		list = []*plugins.Plugin{p}
	}
	// Unreadable config means nothing is granted.
	var cfg map[string]any
	if doc, err := m.Store().Load(); err == nil {
		cfg = doc.Map()
	}
	w := app.IO.Out
	shown := 0
	for _, p := range list {
		declared := capability.KnownOnly(p.Candidate.Manifest.Capabilities)
		effective := capability.GrantedList(cfg, p.Key)
		if name == "" && len(declared) == 0 && len(effective) == 0 {
			continue
		}
		shown++
		fmt.Fprintf(w, "%s (%s)\n", p.Key, sourceLabel(provenance{}, p))
		if len(declared) == 0 {
			fmt.Fprintln(w, "  declared: (none)")
		}
		for _, c := range declared {
			ok, evidence := capability.Granted(cfg, p.Key, c)
			switch {
			case !ok:
				fmt.Fprintf(w, "  %s: not granted\n", c)
			case strings.HasPrefix(evidence, "legacy"):
				fmt.Fprintf(w, "  %s: granted (via legacy allow_* key — deprecated)\n", c)
			default:
				fmt.Fprintf(w, "  %s: granted\n", c)
			}
		}
		for _, c := range effective {
			if !contains(declared, c) {
				fmt.Fprintf(w, "  %s: granted (not declared in manifest)\n", c)
			}
		}
		if len(declared) > 0 && cfg != nil && len(capability.Pending(cfg, p.Key, declared)) > 0 && p.Candidate.Source != "bundled" {
			fmt.Fprintf(w, "  grant with: hermes plugins enable %s (on a terminal)\n", p.Key)
		}
	}
	if shown == 0 {
		fmt.Fprintln(w, "No plugins declare or hold capabilities.")
	}
	return nil
}
