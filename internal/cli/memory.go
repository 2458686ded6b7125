package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/memory"
	"github.com/hermes-go/hermes/internal/termsafe"
)

func newCmdMemory(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "The built-in memory and the external memory provider (memory.provider)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		&cobra.Command{Use: "status", Short: "Show the built-in memory's use and which provider is active", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error { return memoryStatus(cmd.Context(), f) }},
		newCmdMemorySetup(f),
		&cobra.Command{Use: "off", Short: "Use the built-in memory only (memory.provider: \"\")", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error { return memoryOff(cmd.Context(), f) }},
	)
	return cmd
}

func memoryStatus(ctx context.Context, f *app.Factory) error {
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	out := f.IO.Out
	st := h.Memory().Store()
	sayf(out, "Built-in memory: %s\n", st.Dir)
	for _, t := range []struct{ file, target string }{{"MEMORY.md", memory.TargetMemory}, {"USER.md", memory.TargetUser}} {
		entries, err := st.Entries(t.target)
		if err != nil {
			sayf(out, "  %-10s unreadable: %s\n", t.file, err)
			continue
		}
		n := len([]rune(strings.Join(entries, memory.EntryDelimiter)))
		limit := st.MemoryLimit
		if t.target == memory.TargetUser {
			limit = st.UserLimit
		}
		sayf(out, "  %-10s %d entries, %d/%d chars\n", t.file, len(entries), n, limit)
	}
	name := h.MemorySettings().Provider
	var installed []string
	found := false
	for _, p := range h.MemoryProviders() {
		n := p.Candidate.ProviderName()
		installed = append(installed, fmt.Sprintf("%s (%s)", n, p.Candidate.Source))
		found = found || n == name
	}
	switch {
	case name == "":
		sayf(out, "Provider: none (built-in memory only)\n")
	case !found:
		sayf(out, "Provider: %s — not installed; the built-in memory is used (pick one with hermes memory setup NAME, or hermes memory off)\n", name)
	default:
		sayf(out, "Provider: %s — active (loads with the next session)\n", name)
	}
	if len(installed) == 0 {
		sayf(out, "Installed providers: none (put one in %s/memory/<name>/)\n", h.Home().PluginsDir())
	} else {
		sayf(out, "Installed providers: %s\n", strings.Join(installed, ", "))
	}
	return nil
}

func memoryOff(ctx context.Context, f *app.Factory) error {
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Store().Update(ctx, func(d *config.Doc) error { return d.Set("memory.provider", "") }); err != nil {
		return err
	}
	sayf(f.IO.Out, "✓ Memory provider off: the built-in memory only. Takes effect on next session.\n")
	return nil
}

func newCmdMemorySetup(f *app.Factory) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "setup NAME",
		Short: "Select a memory provider and answer its config questions (secrets go to $HERMES_HOME/.env)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return memorySetup(cmd.Context(), f, args[0], sets)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "KEY=VALUE answer for one of the provider's config fields (repeatable)")
	return cmd
}

func memorySetup(ctx context.Context, f *app.Factory, name string, sets []string) error {
	given := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return app.Failf("--set %q is not KEY=VALUE", s)
		}
		given[strings.TrimSpace(k)] = v
	}
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	prov, err := h.LoadMemoryProvider(ctx, name)
	if err != nil {
		return err
	}
	schema, err := prov.ConfigSchema(ctx)
	if err != nil {
		return app.Failf("memory provider %s: get_config_schema failed: %s", name, termsafe.Line(err.Error()))
	}
	in := bufio.NewReader(f.IO.In)
	values := map[string]any{}
	var secrets []string
	for _, field := range schema {
		str := func(k string) string { s, _ := field[k].(string); return s }
		key := str("key")
		if key == "" {
			continue
		}
		secret, _ := field["secret"].(bool)
		required, _ := field["required"].(bool)
		v, ok := given[key]
		delete(given, key)
		if !ok && f.IO.CanPrompt() {
			def := fmt.Sprint(field["default"])
			if field["default"] == nil || secret {
				def = ""
			}
			sayf(f.IO.Err, "%s (%s)%s: ", termsafe.Line(key), termsafe.Line(str("description")), map[bool]string{true: " [" + termsafe.Line(def) + "]"}[def != ""])
			line, _ := in.ReadString('\n')
			if v, ok = strings.TrimRight(line, "\r\n"), true; v == "" {
				v, ok = def, def != ""
			}
		}
		if !ok {
			if d, has := field["default"]; has && d != nil {
				values[key] = d
				continue
			}
			if required {
				return app.Failf("memory provider %s needs %s (%s): pass --set %s=VALUE", name, key, termsafe.Line(str("description")), key)
			}
			continue
		}
		if env := str("env_var"); secret || env != "" {
			if env == "" {
				env = strings.ToUpper(key)
			}
			if err := config.SetDotenv(ctx, h.Home().EnvPath(), env, v); err != nil {
				return err
			}
			secrets = append(secrets, env)
			continue
		}
		values[key] = v
	}
	for k := range given {
		return app.Failf("memory provider %s has no config field %q (its fields come from get_config_schema)", name, k)
	}
	if len(values) > 0 {
		if err := prov.SaveConfig(ctx, values, h.Home().Dir); err != nil {
			return app.Failf("memory provider %s: save_config failed: %s", name, termsafe.Line(err.Error()))
		}
	}
	if err := h.Store().Update(ctx, func(d *config.Doc) error { return d.Set("memory.provider", name) }); err != nil {
		return err
	}
	if len(secrets) > 0 {
		sayf(f.IO.Out, "Saved %s to %s\n", strings.Join(secrets, ", "), h.Home().EnvPath())
	}
	sayf(f.IO.Out, "✓ Memory provider %s selected. Takes effect on next session.\n", name)
	return nil
}
