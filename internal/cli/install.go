package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// pluginInstaller is the installer of this command's HERMES_HOME, scanning
// what it installs.
func pluginInstaller(f *app.Factory) (*install.Installer, error) {
	return f.Installer(f.InstallScanner())
}

// pluginsInstallCommands are install, update, remove, capabilities and
// repair-metadata, registered under `hermes plugins`.
func pluginsInstallCommands(f *app.Factory) []*cobra.Command {
	return []*cobra.Command{
		newCmdPluginsInstall(f, nil), newCmdPluginsUpdate(f, nil), newCmdPluginsRemove(f, nil),
		newCmdPluginsCapabilities(f, nil), newCmdPluginsRepairMetadata(f, nil),
	}
}

// installFail turns an installer error into the CLI's exit-1 message, or exit 130
// for an interrupt (it says what was left as it was).
func installFail(err error) error {
	var ec *app.ExitError
	if errors.As(err, &ec) {
		return err
	}
	var ie *install.InterruptedError
	if errors.As(err, &ie) {
		return &app.ExitError{Code: app.ExitInterrupted, Message: ie.Error()}
	}
	return app.Failf("Error: %v", err)
}

// ---- install ----------------------------------------------------------------------

type installOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Identifier   string
	Ref          string
	Force        bool
	Replace      bool
	AllowRemoved bool
	Setup        setupOptions
}

// setupOptions are the install flags for the steps after the install itself,
// also set by the pack and open-url verbs, which install through the same path.
type setupOptions struct {
	Enable, NoEnable bool
	SkipEnv, NoGrant bool
}

func newCmdPluginsInstall(f *app.Factory, runF func(*installOptions) error) *cobra.Command {
	opts := &installOptions{IO: f.IO, Factory: f}
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
			opts.Identifier = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsInstallRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Ref, "ref", "", "install exactly this commit (full 40-character `SHA`) and pin it")
	fl.BoolVarP(&opts.Force, "force", "f", false, "replace an existing plugin of the same name; install despite a caution scan verdict")
	fl.BoolVar(&opts.Replace, "replace", false, "replace an existing plugin of the same name, nothing more (a caution verdict is still asked about)")
	fl.BoolVar(&opts.Setup.Enable, "enable", false, "enable the plugin after installing (no prompt)")
	fl.BoolVar(&opts.Setup.NoEnable, "no-enable", false, "leave the plugin not enabled (no prompt)")
	fl.BoolVar(&opts.Setup.SkipEnv, "skip-env", false, "do not ask for requires_env values (list the missing ones)")
	fl.BoolVar(&opts.Setup.NoGrant, "no-grant", false, "do not ask for capability consent (declared capabilities stay off)")
	fl.BoolVar(&opts.AllowRemoved, "allow-removed", false, "install even though the catalog's kill list names the plugin (recorded, so it loads)")
	cmd.MarkFlagsMutuallyExclusive("enable", "no-enable")
	return cmd
}

func pluginsInstallRun(ctx context.Context, opts *installOptions) error {
	f := opts.Factory
	req := install.Request{Identifier: opts.Identifier, Ref: opts.Ref, Force: opts.Force, Replace: opts.Replace, AllowRemoved: opts.AllowRemoved}
	// A bare name (no '/', no scheme) is a catalog name; owner/repo and URLs never
	// touch the catalog (catalog.go).
	if catalog.IsBareName(opts.Identifier) {
		var err error
		if req, err = catalogInstallRequest(ctx, opts); err != nil {
			return err
		}
	}
	_, err := installAndSetUp(ctx, f, req, opts.Setup)
	return err
}

// installAndSetUp runs one install.Request through the whole CLI path: the scan
// setting and the caution question on a terminal, the install itself, requires_env
// prompts, the enable decision (o.Enable / o.NoEnable, else a prompt on a terminal)
// and capability consent. Catalog and pack commands call it once per plugin with a
// Request carrying URL, Subdir, Ref and Catalog provenance.
func installAndSetUp(ctx context.Context, f *app.Factory, req install.Request, o setupOptions) (*install.Result, error) {
	in, err := pluginInstaller(f)
	if err != nil {
		return nil, err
	}
	if req.KillList == nil {
		// Installing from a source: the kill list as loading will judge the plugin
		// (cached catalog and seed), so what installs also loads; no fetch.
		req.KillList = f.KillList()
	}
	req.ScanDisabled = req.ScanDisabled || !f.ScanOnInstall()
	if f.IO.CanPrompt() && req.ConfirmCaution == nil {
		req.ConfirmCaution = func(rep *install.ScanReport) bool {
			fmt.Fprintln(f.IO.Out, "⚠ Security scan flagged this plugin:")
			fmt.Fprintln(f.IO.Out, safeText(strings.TrimRight(rep.Report, "\n")))
			// An interrupt is a no here; the installer sees ctx end and says so.
			yes, _ := f.IO.Confirm(ctx, "  Install anyway? Only continue if you trust the source. [y/N]: ")
			return yes
		}
	}
	res, err := in.Install(ctx, req)
	if err != nil {
		return nil, installFail(err)
	}
	w := f.IO.Out
	for _, warn := range res.Warnings {
		f.Warn(warn)
	}
	if res.Scan != nil && res.Scan.Verdict != install.VerdictSafe && res.Scan.Report != "" && (req.Force || !f.IO.CanPrompt()) {
		fmt.Fprintln(f.IO.Err, safeText(strings.TrimRight(res.Scan.Report, "\n")))
	}
	for _, c := range res.Created {
		sayf(w, "Created %s from %s.example\n", c, c)
	}
	pin := ""
	if res.Pinned {
		pin = ", pinned"
	}
	verb := "Installed"
	if res.Replaced {
		verb = "Reinstalled"
	}
	sayf(w, "✓ %s %s from %s @ %s%s\n", verb, res.Name, res.Source.Canonical(), res.Revision[:12], pin)
	sayf(w, "  Location: %s\n", res.Dir)
	if b, err := os.ReadFile(filepath.Join(res.Dir, "after-install.md")); err == nil {
		fmt.Fprintf(w, "\n%s\n\n", safeText(strings.TrimRight(string(b), "\n")))
	}
	if deps := res.Manifest.PythonDependencies; len(deps) > 0 {
		sayf(w, "%s declares Python dependencies (not installed automatically): %s\n  Install them with: pip install %s\n", res.Name, strings.Join(deps, ", "), strings.Join(deps, " "))
	}
	if err := promptRequiresEnv(ctx, f, res.Name, res.Manifest, o.SkipEnv); err != nil {
		return res, err
	}

	enable := o.Enable
	if !o.Enable && !o.NoEnable {
		if res.Manifest.Portable {
			// Upstream installs portable packages disabled: their skills reach
			// the model and their MCP servers run only once the user enables them.
			sayf(w, "%s is a portable agent plugin (plugin.json): installed disabled. Review it, then enable it with: hermes plugins enable %s\n", res.Name, res.Name)
		} else if f.IO.CanPrompt() {
			if enable, err = f.IO.Confirm(ctx, fmt.Sprintf("  Enable '%s' now? [y/N]: ", res.Name)); err != nil {
				return res, err
			}
		} else {
			sayf(w, "Not enabled. Enable it with: hermes plugins enable %s\n", res.Name)
		}
	}
	// --no-grant: the consent step runs as it would without a terminal (fail closed).
	if o.NoGrant && f.IO.InTTY {
		f.IO.InTTY = false
		defer func() { f.IO.InTTY = true }()
	}
	if enable {
		return res, enablePlugin(ctx, f, res.Name, nil)
	}
	declared := capability.KnownOnly(res.Manifest.Capabilities)
	if len(declared) == 0 {
		return res, nil
	}
	m, p, err := resolveInstalled(ctx, f, res.Name)
	if err != nil {
		return res, err
	}
	return res, runCapabilityConsent(ctx, f, m, p.Key, declared, "requests")
}

// resolveInstalled finds a just-installed or updated plugin through discovery.
func resolveInstalled(ctx context.Context, f *app.Factory, name string) (*app.Host, *plugins.Plugin, error) {
	m, err := f.Host(ctx)
	if err != nil {
		return nil, nil, err
	}
	p, err := m.Resolve(name)
	if err != nil {
		return nil, nil, app.Failf("%v", err)
	}
	return m, p, nil
}

// promptRequiresEnv asks for requires_env values that are set neither in the
// environment nor in $HERMES_HOME/.env, on a terminal only, and saves them to .env
// (mode 0600). Secret values are read without echo.
func promptRequiresEnv(ctx context.Context, f *app.Factory, name string, m *manifest.Manifest, skip bool) error {
	h, err := f.Home()
	if err != nil {
		return err
	}
	dotenv, err := config.ReadDotenv(h.EnvPath())
	if err != nil {
		dotenv = map[string]string{}
	}
	var missing []manifest.EnvVar
	for _, e := range m.RequiresEnv {
		if f.Env(e.Name) == "" && dotenv[e.Name] == "" {
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
	if skip || !f.IO.CanPrompt() {
		sayf(f.IO.Out, "%s needs environment variable(s) that are not set: %s\n  Add them to %s (or the environment) before enabling it.\n", name, strings.Join(names, ", "), h.EnvPath())
		return nil
	}
	sayf(f.IO.Out, "%s needs these environment variables (saved to %s; leave empty to skip):\n", name, h.EnvPath())
	for _, e := range missing {
		label := e.Name
		if e.Description != "" {
			label += " (" + e.Description + ")"
		}
		if e.URL != "" {
			sayf(f.IO.Out, "  Get it at: %s\n", e.URL)
		}
		sayf(f.IO.Out, "  %s: ", label)
		var val string
		var rerr error
		if e.Secret || secretName(e.Name) {
			val, rerr = f.IO.ReadSecret(ctx)
			fmt.Fprintln(f.IO.Out)
		} else {
			val, rerr = f.IO.ReadLine(ctx)
		}
		if ctx.Err() != nil {
			// Interrupted: the values saved so far stay, nothing else is asked.
			return ctx.Err()
		}
		val = strings.TrimRight(val, "\r\n")
		if rerr != nil && val == "" {
			fmt.Fprintln(f.IO.Out, "\nSkipped the remaining variables.")
			return nil
		}
		if strings.TrimSpace(val) == "" {
			continue
		}
		if err := config.SetDotenv(ctx, h.EnvPath(), e.Name, val); err != nil {
			return err
		}
		sayf(f.IO.Out, "  ✓ Saved %s to %s\n", e.Name, h.EnvPath())
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

// ---- update -----------------------------------------------------------------------

type updateOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string
}

func newCmdPluginsUpdate(f *app.Factory, runF func(*updateOptions) error) *cobra.Command {
	opts := &updateOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "update NAME",
		Short: "Pull the latest commit of a git-installed plugin (local edits are autostashed and re-applied)",
		Long: "Update a plugin installed from git: pull its branch fast-forward, stashing local edits and\n" +
			"re-applying them. A plugin pinned with --ref is refused. A plugin installed by catalog name is\n" +
			"re-pinned to the commit the catalog lists now; if that commit declares tools or hooks the\n" +
			"installed one does not, you confirm on a terminal first (without one it is not applied).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsUpdateRun(cmd.Context(), opts)
		},
	}
}

func pluginsUpdateRun(ctx context.Context, opts *updateOptions) error {
	f, name := opts.Factory, opts.Name
	in, err := pluginInstaller(f)
	if err != nil {
		return err
	}
	if err := in.CheckInstalled(name); err != nil {
		return installFail(err) // before "Updating", which would say it exists
	}
	// Discovery first: the kill list (as loading judges it) and the plugin's key.
	m, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	p, rerr := m.Resolve(name)
	if rerr != nil {
		rerr = app.Failf("%v", rerr)
	} else if killed(p) {
		return removedError(p, "was not updated")
	}
	w := opts.IO.Out
	if row, ok, err := in.Row(name); err == nil && ok && row.Pinned && row.Catalog != nil && row.Catalog.Name != "" {
		return updateFromCatalog(ctx, f, in, m, p, name, row)
	}
	sayf(w, "Updating %s...\n", name)
	res, err := in.Update(ctx, install.UpdateRequest{Name: name, ScanDisabled: !f.ScanOnInstall()})
	if err != nil && res == nil {
		return installFail(err)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, safeText(n))
	}
	for _, c := range res.Created {
		sayf(w, "Created %s from %s.example\n", c, c)
	}
	if err != nil {
		return installFail(err)
	}
	if res.Scan != nil && res.Scan.Verdict != install.VerdictSafe {
		fmt.Fprintln(w, "⚠ Security scan flagged the updated plugin:")
		fmt.Fprintln(w, safeText(strings.TrimRight(res.Scan.Report, "\n")))
		if res.Scan.Verdict == install.VerdictDangerous {
			for _, b := range res.Scan.Blocking {
				sayf(w, "  %s\n", b)
			}
			if rerr != nil {
				return rerr
			}
			if err := disablePlugin(ctx, f, p.Key); err != nil {
				return err
			}
			return app.Failf("Plugin '%s' has been disabled. Review the findings, then re-enable with `hermes plugins enable %s` if you trust it. (Scanning can be turned off with plugins.scan_on_install: false in config.yaml.)", p.Key, p.Key)
		}
	}
	if res.UpToDate {
		sayf(w, "✓ Plugin %s is already up to date.\n", name)
	} else {
		sayf(w, "✓ Plugin %s updated (%s → %s).\n", name, res.Before[:12], res.After[:12])
	}
	if rerr != nil || res.Manifest == nil {
		return nil
	}
	return updateConsent(ctx, f, m, p, res.Manifest)
}

// updateConsent asks for the capabilities an update newly declares, which stay
// off until consented.
func updateConsent(ctx context.Context, f *app.Factory, m *app.Host, p *plugins.Plugin, mf *manifest.Manifest) error {
	w := f.IO.Out
	declared := capability.KnownOnly(mf.Capabilities)
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
	if len(pending) > 0 && !f.IO.CanPrompt() {
		sayf(w, "Plugin %s has new capabilities (%s); review them with `hermes plugins capabilities %s` and grant them with `hermes plugins enable %s` on a terminal. Until then they stay off.\n", p.Key, strings.Join(pending, ", "), p.Key, p.Key)
		return nil
	}
	return runCapabilityConsent(ctx, f, m, p.Key, declared, "now requests")
}

// ---- remove -----------------------------------------------------------------------

type removeOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string
}

func newCmdPluginsRemove(f *app.Factory, runF func(*removeOptions) error) *cobra.Command {
	opts := &removeOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm", "uninstall"},
		Short:   "Delete an installed plugin's folder and its install metadata row",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pluginsRemoveRun(cmd.Context(), opts)
		},
	}
}

func pluginsRemoveRun(ctx context.Context, opts *removeOptions) error {
	in, err := pluginInstaller(opts.Factory)
	if err != nil {
		return err
	}
	if err := in.Remove(ctx, opts.Name); err != nil {
		return installFail(err)
	}
	sayf(opts.IO.Out, "✗ Plugin %s removed from %s\n", opts.Name, in.PluginsDir)
	return nil
}

// ---- repair-metadata ----------------------------------------------------------------

type repairMetadataOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory
}

func newCmdPluginsRepairMetadata(f *app.Factory, runF func(*repairMetadataOptions) error) *cobra.Command {
	opts := &repairMetadataOptions{IO: f.IO, Factory: f}
	return &cobra.Command{
		Use:   "repair-metadata",
		Short: "Move a corrupt plugins/.install-metadata.json aside and rebuild it from the git checkouts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pluginsRepairMetadataRun(cmd.Context(), opts)
		},
	}
}

func pluginsRepairMetadataRun(ctx context.Context, opts *repairMetadataOptions) error {
	in, err := pluginInstaller(opts.Factory)
	if err != nil {
		return err
	}
	backup, names, skipped, err := in.RepairMetadata(ctx)
	if err != nil {
		return installFail(err)
	}
	w := opts.IO.Out
	if backup == "" {
		fmt.Fprintln(w, "Install metadata is readable; nothing to repair.")
		return nil
	}
	sayf(w, "Moved the corrupt metadata to %s\n", backup)
	sayf(w, "Rebuilt %d row(s) from git checkouts: %s\n", len(names), strings.Join(names, ", "))
	if len(skipped) > 0 {
		sayf(w, "Not rebuilt (no git checkout to read provenance from): %s\n  Their rows are only in the moved file; reinstall them with `hermes plugins install <source> --force` to record them again.\n", strings.Join(skipped, ", "))
	}
	fmt.Fprintln(w, "Detached checkouts were recorded as pinned. Compare with the old file and fix by hand if needed.")
	return nil
}

// ---- capabilities -----------------------------------------------------------------

type capabilitiesOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Name string // "": every plugin that declares or holds one
	JSON bool
}

func newCmdPluginsCapabilities(f *app.Factory, runF func(*capabilitiesOptions) error) *cobra.Command {
	opts := &capabilitiesOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "capabilities [NAME]",
		Short: "Show the capabilities plugins declare and which are granted",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return pluginsCapabilitiesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

// capabilityRow is one plugin of `plugins capabilities` (its --json shape).
type capabilityRow struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	Capabilities []capabilityUse `json:"capabilities"`
	// Pending are the declared capabilities still waiting for consent.
	Pending   []string `json:"pending"`
	GrantWith string   `json:"grant_with,omitempty"`
}

type capabilityUse struct {
	Capability string `json:"capability"`
	Risk       string `json:"risk"`
	Declared   bool   `json:"declared"`
	Granted    bool   `json:"granted"`
	// Via is how it is granted: granted_capabilities (consent) or legacy_key (a
	// deprecated allow_* key); empty when not granted.
	Via string `json:"via,omitempty"`
}

func pluginsCapabilitiesRun(ctx context.Context, opts *capabilitiesOptions) error {
	name := opts.Name
	m, err := opts.Factory.Host(ctx)
	if err != nil {
		return err
	}
	list := m.Plugins()
	if name != "" {
		p, err := m.Resolve(name)
		if err != nil {
			return app.Failf("%v", err)
		}
		list = []*plugins.Plugin{p}
	}
	// Unreadable config means nothing is granted.
	var cfg map[string]any
	if doc, err := m.Store().Load(); err == nil {
		cfg = doc.Map()
	}
	rows := []capabilityRow{}
	for _, p := range list {
		declared := capability.KnownOnly(p.Candidate.Manifest.Capabilities)
		effective := capability.GrantedList(cfg, p.Key)
		if name == "" && len(declared) == 0 && len(effective) == 0 {
			continue
		}
		row := capabilityRow{Name: p.Key, Source: sourceLabel(provenance{}, p), Capabilities: []capabilityUse{}, Pending: []string{}}
		use := func(c string, isDeclared bool) {
			ok, evidence := capability.Granted(cfg, p.Key, c)
			info, _ := capability.Lookup(c)
			u := capabilityUse{Capability: c, Risk: info.Risk, Declared: isDeclared, Granted: ok}
			switch {
			case ok && strings.HasPrefix(evidence, "legacy"):
				u.Via = "legacy_key"
			case ok:
				u.Via = "granted_capabilities"
			}
			row.Capabilities = append(row.Capabilities, u)
		}
		for _, c := range declared {
			use(c, true)
		}
		for _, c := range effective {
			if !contains(declared, c) {
				use(c, false)
			}
		}
		if len(declared) > 0 && cfg != nil && p.Candidate.Source != "bundled" {
			if pending := capability.Pending(cfg, p.Key, declared); len(pending) > 0 {
				row.Pending = pending
				row.GrantWith = "hermes plugins enable " + p.Key
			}
		}
		rows = append(rows, row)
	}
	w := opts.IO.Out
	if opts.JSON {
		return writeJSON(w, rows)
	}
	for _, r := range rows {
		sayf(w, "%s (%s)\n", r.Name, r.Source)
		if len(r.Capabilities) == 0 || !r.Capabilities[0].Declared {
			fmt.Fprintln(w, "  declared: (none)")
		}
		for _, u := range r.Capabilities {
			switch {
			case !u.Declared:
				sayf(w, "  %s: granted (not declared in manifest)\n", u.Capability)
			case !u.Granted:
				sayf(w, "  %s: not granted\n", u.Capability)
			case u.Via == "legacy_key":
				sayf(w, "  %s: granted (via legacy allow_* key — deprecated)\n", u.Capability)
			default:
				sayf(w, "  %s: granted\n", u.Capability)
			}
		}
		if r.GrantWith != "" {
			sayf(w, "  grant with: %s (on a terminal)\n", r.GrantWith)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "No plugins declare or hold capabilities.")
	}
	return nil
}
