package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins"
)

// afterEnableConsent runs the capability consent flow after enabling a non-bundled
// plugin, or the legacy tool-override question when it declares no capabilities;
// toolOverride, when set, answers that question without asking.
func afterEnableConsent(ctx context.Context, f *app.Factory, m *app.Host, p *plugins.Plugin, toolOverride *bool) error {
	declared := capability.KnownOnly(p.Candidate.Manifest.Capabilities)
	if len(declared) > 0 {
		if err := runCapabilityConsent(ctx, f, m, p.Key, declared, "requests"); err != nil {
			return err
		}
		if toolOverride == nil {
			return nil
		}
	}
	value := toolOverride
	if value == nil && len(declared) == 0 && f.IO.CanPrompt() {
		fmt.Fprintln(f.IO.Out, "Allow this plugin to replace built-in tools (e.g. shell_exec, write_file)?")
		fmt.Fprintln(f.IO.Out, "Only plugins you trust should get this: an override sees every call routed through that tool.")
		yes, err := f.IO.Confirm(ctx, "Grant it? [y/N] ")
		if err != nil {
			return err // interrupted: nothing is written, not even the no
		}
		value = boolPtr(yes)
	}
	if value == nil {
		return nil
	}
	return m.Store().Update(ctx, func(d *config.Doc) error {
		return d.SetPath([]string{"plugins", "entries", p.Key, "allow_tool_override"}, *value)
	})
}

// runCapabilityConsent asks once for the pending declared capabilities. Outside a
// terminal nothing is granted (fail closed) and the user is told how to grant later.
func runCapabilityConsent(ctx context.Context, f *app.Factory, m *app.Host, id string, declared []string, verb string) error {
	doc, err := m.Store().Load()
	if err != nil {
		return err
	}
	pending := capability.Pending(doc.Map(), id, declared)
	if len(pending) == 0 {
		if capability.DeclaredSetChanged(doc.Map(), id, declared) {
			return m.Store().Update(ctx, func(d *config.Doc) error {
				return capability.RecordConsent(d, id, nil, declared, f.Now())
			})
		}
		return nil
	}
	w := f.IO.Out
	sayf(w, "Plugin %s %s the following capabilities:\n", id, verb)
	for _, c := range pending {
		capInfo, _ := capability.Lookup(c)
		sayf(w, "    %s — %s\n", c, capInfo.Risk)
	}
	fmt.Fprintln(w, "Granting trusts the plugin author with these host surfaces. This is consent, not a sandbox — the plugin runs with your user's permissions.")
	if !f.IO.CanPrompt() {
		sayf(w, "Non-interactive session: capabilities NOT granted (fail closed). Run `hermes plugins capabilities %s` to review and `hermes plugins enable %s` to grant interactively.\n", id, id)
		return nil
	}
	yes, err := f.IO.Confirm(ctx, "  Grant these capabilities? [y/N] ")
	if err != nil {
		return err
	}
	if !yes {
		sayf(w, "Declined. %s stays enabled with these capabilities off; it should degrade gracefully (ctx.has_capability()).\n", id)
		return nil
	}
	err = m.Store().Update(ctx, func(d *config.Doc) error {
		return capability.RecordConsent(d, id, pending, declared, f.Now())
	})
	if err != nil {
		return err
	}
	sayf(w, "✓ Granted: %s (plugins.entries.%s.granted_capabilities)\n", strings.Join(pending, ", "), id)
	return nil
}
