package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/shellhooks"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// ShellHooks is the `hooks:` section of config.yaml, parsed, and where the
// consent to run each of its commands is kept.
type ShellHooks struct {
	Specs     []shellhooks.Spec
	Allowlist shellhooks.Allowlist
	// AutoAccept: --accept-hooks, HERMES_ACCEPT_HOOKS=1 or hooks_auto_accept:
	// true consents to every hook without asking (and records it).
	AutoAccept bool
	// Approvals are the consent records as read when the section was.
	Approvals []shellhooks.Approval

	f *Factory
}

// ShellHooks reads the `hooks:` section and the allowlist. An entry that is
// wrong is an error naming it; what hermes can fix itself is warned about.
func (f *Factory) ShellHooks() (*ShellHooks, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	store, err := f.Store()
	if err != nil {
		return nil, err
	}
	doc, err := store.Load()
	if err != nil {
		return nil, err
	}
	return f.shellHooksOf(doc, h.Dir)
}

// ShellHookAllowlist is the consent store of this command's HERMES_HOME.
func (f *Factory) ShellHookAllowlist() (shellhooks.Allowlist, error) {
	h, err := f.Home()
	if err != nil {
		return shellhooks.Allowlist{}, err
	}
	return shellhooks.Allowlist{Path: filepath.Join(h.Dir, shellhooks.AllowlistFile), Home: f.Env("HOME")}, nil
}

func (f *Factory) shellHooksOf(doc *config.Doc, homeDir string) (*ShellHooks, error) {
	cfg := doc.Map()
	specs, warnings, err := shellhooks.Parse(cfg["hooks"])
	for _, w := range warnings {
		f.Warn(w)
	}
	if err != nil {
		return nil, Failf("Error: %v", err)
	}
	sh := &ShellHooks{
		Specs:      specs,
		Allowlist:  shellhooks.Allowlist{Path: filepath.Join(homeDir, shellhooks.AllowlistFile), Home: f.Env("HOME")},
		AutoAccept: f.AcceptHooks || Truthy(f.Env("HERMES_ACCEPT_HOOKS")) || truthyValue(cfg["hooks_auto_accept"]),
		f:          f,
	}
	if len(specs) > 0 {
		if sh.Approvals, err = sh.Allowlist.Load(); err != nil {
			return nil, Failf("Error: %v", err)
		}
	}
	return sh, nil
}

func truthyValue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return Truthy(x)
	}
	return false
}

// Runner starts hook commands as this command does every process: in a cell
// of its reaper, with its environment, in its working directory.
func (sh *ShellHooks) Runner() *shellhooks.Runner {
	return &shellhooks.Runner{Reaper: sh.f.procs, Environ: sh.f.environ(), Home: sh.f.Env("HOME"), Dir: sh.f.Cwd, Now: sh.f.Now}
}

// Hook is spec ready to fire, with this command's runner and log.
func (sh *ShellHooks) Hook(spec shellhooks.Spec) *shellhooks.Hook {
	profile := sh.f.Profile
	if h, err := sh.f.Home(); err == nil && h.Profile != "" {
		profile = h.Profile
	}
	if profile == "" {
		profile = "default"
	}
	return &shellhooks.Hook{Spec: spec, Runner: sh.Runner(), Cwd: sh.f.Cwd, Profile: profile, Logger: sh.f.Logger()}
}

// Consent reports whether spec may run: it was approved before, or auto-accept
// approves it now, or the user says yes at the prompt (a terminal only). In a
// session nobody can answer, an unapproved hook never runs: one warning line
// says how to consent.
func (sh *ShellHooks) Consent(ctx context.Context, spec shellhooks.Spec) (bool, error) {
	if _, ok := shellhooks.Lookup(sh.Approvals, spec.Event, spec.Command); ok {
		return true, nil
	}
	record := func() error {
		if err := sh.Allowlist.Approve(ctx, spec.Event, spec.Command, sh.f.Now()); err != nil {
			// Consent was given: it holds for this command, and is asked again next time.
			sh.f.Warn(fmt.Sprintf("%v; the approval holds for this run only", err))
		}
		sh.Approvals = append(sh.Approvals, shellhooks.Approval{Event: spec.Event, Command: spec.Command})
		return nil
	}
	if sh.AutoAccept {
		return true, record()
	}
	io := sh.f.IO
	if !io.CanPrompt() {
		sh.f.Warn(fmt.Sprintf("shell hook %s (%s %s) is not approved and does not run; approve it at the prompt of an interactive hermes, "+
			"or pass --accept-hooks, set HERMES_ACCEPT_HOOKS=1 or hooks_auto_accept: true", spec.Where(), spec.Event, spec.Command))
		return false, nil
	}
	fmt.Fprintf(io.Out, "\n⚠ config.yaml asks hermes to run a command on your behalf (%s):\n\n    Event:   %s\n    Command: %s\n\n"+
		"  It runs as you, with all your permissions, every time the event fires.\n  Approve only commands you trust.\n",
		termsafe.Line(spec.Where()), termsafe.Line(spec.Event), termsafe.Line(spec.Command))
	yes, err := io.Confirm(ctx, "Allow this hook to run? [y/N] ")
	if err != nil || !yes {
		if err == nil {
			fmt.Fprintf(io.Out, "Not approved: %s does not run (you are asked again next time).\n", termsafe.Line(spec.Command))
		}
		return false, err
	}
	return true, record()
}

// RegisterShellHooks is registerShellHooks for a command that runs tools
// without a chat (`hermes tools call`, `hermes mcp serve`); call it after Load.
func (h *Host) RegisterShellHooks(ctx context.Context) error {
	doc, err := h.Store().Load()
	if err != nil {
		return err
	}
	return h.registerShellHooks(ctx, doc)
}

// registerShellHooks puts every consented shell hook on the dispatcher after
// the plugins' callbacks (the plugins are loaded), so their results come after
// the plugins', as upstream orders them.
func (h *Host) registerShellHooks(ctx context.Context, doc *config.Doc) error {
	if h.SafeMode() {
		return nil // HERMES_SAFE_MODE runs no user code at all, shell hooks included (upstream)
	}
	sh, err := h.f.shellHooksOf(doc, h.home.Dir)
	if err != nil {
		return err
	}
	d := h.Registry.Hooks()
	for _, spec := range sh.Specs {
		ok, err := sh.Consent(ctx, spec)
		if err != nil {
			return err
		}
		if ok {
			d.Register(spec.Event, sh.Hook(spec).Callback())
		}
	}
	return nil
}
