package cli

import (
	"context"

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
		out = append(out, plugins.Builtin{Manifest: b.Manifest, Plugin: b.Plugin})
	}
	return out
}

// newApprover returns the interactive approval prompt when a human can answer it
// (stdin and stderr are terminals), else nil: nobody can be asked, and commands or
// plugin calls that need approval are refused with a message saying how to allow them.
func (a *App) newApprover(h home.Home) *approval.Approver {
	if !a.IO.InTTY || !a.IO.ErrTTY {
		return nil
	}
	return approval.NewCLIApprover(a.IO.In, a.IO.Err, &config.Store{Path: h.ConfigPath()}, nil)
}

// registerBuiltinTools adds read_file, write_file, patch, search_files and terminal to
// the manager's registry, before plugins load so a plugin tool of the same name needs
// the tools.override capability. The terminal is guarded by the rules in config.yaml
// (command_allowlist, approvals.deny, read on first use), and transform_terminal_output
// fires through the manager's hooks.
func (a *App) registerBuiltinTools(m *plugins.Manager, appr *approval.Approver) error {
	h := m.Home()
	var approver tools.Approver
	if appr != nil {
		approver = appr
	}
	return builtin.Register(m.Tools, builtin.Options{
		WorkDir:        a.Cwd,
		Guard:          approval.NewGuardFromStore(m.Store()),
		Approver:       approver,
		ProtectedPaths: []string{h.ConfigPath(), h.EnvPath()},
		SecretPaths:    []string{h.EnvPath()},
		TransformOutput: func(ctx context.Context, command, output string, exitCode int) string {
			hk := m.Hooks
			if hk == nil || !hk.Has(hooks.HookTransformTerminalOutput) {
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

// managerHooks fires through the manager's current dispatcher (a re-Discover
// replaces it).
type managerHooks struct{ m *plugins.Manager }

func (h managerHooks) Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any {
	if h.m.Hooks == nil || !h.m.Hooks.Has(hook) {
		return nil
	}
	return h.m.Hooks.Fire(ctx, hook, payload)
}
