package app

import (
	"context"
	"time"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/bundled"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/internal/tools/builtin"
)

// builtinPlugins are the Go plugins compiled into this binary (source "bundled").
func builtinPlugins() []plugins.Builtin {
	var out []plugins.Builtin
	for _, b := range bundled.All() {
		out = append(out, plugins.Builtin{Manifest: b.Manifest, Plugin: b.Plugin, Category: b.Category})
	}
	return out
}

// newApprover returns the interactive approval prompt when a human can answer it
// (stdin and stderr are terminals), or the selected approval transport's
// approver; else nil: nobody can be asked, and commands or plugin calls that
// need approval are refused with a message saying how to allow them.
func newApprover(io *IOStreams, h home.Home, redact func(string) string, route *approval.TransportRoute, timeout time.Duration) *approval.Approver {
	store := &config.Store{Path: h.ConfigPath()}
	if !io.InTTY || !io.ErrTTY {
		if !route.Selected() {
			return nil
		}
		// A transport asks someone elsewhere; its builtin fallback has nobody here to ask (deny).
		return &approval.Approver{Store: store, Surface: "cli", Warn: io.Err, Transport: route, Timeout: timeout}
	}
	a := approval.NewCLIApprover(io.In, io.Err, store, nil)
	if tp, ok := a.Prompter.(*approval.TTYPrompter); ok {
		tp.Redact = redact
	}
	a.Transport, a.Timeout = route, timeout
	return a
}

// registerBuiltinTools adds read_file, write_file, patch, search_files, terminal,
// skills_list and skill_view to
// the registry, before plugins load so a plugin tool of the same name needs
// the tools.override capability. The terminal is guarded by the rules in config.yaml
// (command_allowlist, approvals.deny, read on first use), and transform_terminal_output
// fires through the manager's hooks.
func (host *Host) registerBuiltinTools() error {
	h := host.home
	var approver tools.Approver
	switch {
	case host.toolApprover != nil:
		approver = host.toolApprover
	case host.Approver != nil:
		approver = host.Approver
	}
	hk := host.Registry.Hooks()
	if err := builtin.RegisterSkills(host.Registry.Tools(), host.Skills()); err != nil {
		return err
	}
	return builtin.Register(host.Registry.Tools(), builtin.Options{
		WorkDir:        host.f.Cwd,
		Environ:        host.f.environ(),
		Guard:          host.guard(),
		Approver:       approver,
		ProtectedPaths: []string{h.ConfigPath(), h.EnvPath()},
		SecretPaths:    []string{h.EnvPath()},
		Reaper:         host.f.procs,
		TransformOutput: func(ctx context.Context, command, output string, exitCode int) string {
			if !hk.Has(hooks.HookTransformTerminalOutput) {
				return output
			}
			results := hk.Fire(ctx, hooks.HookTransformTerminalOutput, map[string]any{
				"command": command, "output": output, "returncode": exitCode, "task_id": "", "env_type": "local",
			})
			for _, r := range results {
				if s, ok := r.(string); ok {
					return s
				}
			}
			return output
		},
	})
}

// guard is the terminal tool's command guard: the rules of config.yaml, and the
// home directory and policy files of this profile (a write to its config.yaml
// or .env needs approval, whichever profile is in use).
func (host *Host) guard() *approval.Guard {
	g := approval.NewGuardFromStore(host.Store())
	g.Places = approval.Places{UserHome: host.f.Env("HOME"), Policy: []string{host.home.ConfigPath(), host.home.EnvPath()}}
	return g
}
