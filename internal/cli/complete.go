package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins"
)

// Shell completion of the names verbs take: plugins, tools and sessions. Every
// source reads files only (the plugins' manifests, the record of what they
// registered at their last load, state.db), so completing never starts a plugin.

// nameSource lists the candidates for an argument, with descriptions.
type nameSource func(ctx context.Context, f *app.Factory) []cobra.Completion

// argCompletions are the verbs whose first argument is completed, by command path.
func argCompletions() map[string]nameSource {
	return map[string]nameSource{
		"plugins show":         pluginNames(nil),
		"plugins capabilities": pluginNames(nil),
		"plugins enable":       pluginNames(func(p *plugins.Plugin) bool { return p.Status != plugins.StatusEnabled }),
		"plugins disable":      pluginNames(func(p *plugins.Plugin) bool { return p.Status != plugins.StatusDisabled }),
		"plugins update":       installedNames,
		"plugins remove":       installedNames,
		"tools call":           toolNames,
		"sessions show":        sessionIDs,
		"sessions delete":      sessionIDs,
	}
}

// addCompletions wires the name completions into root's verbs.
func addCompletions(root *cobra.Command, f *app.Factory) {
	for path, src := range argCompletions() {
		if cmd, _, err := root.Find(strings.Fields(path)); err == nil && cmd.CommandPath() == root.Name()+" "+path {
			cmd.ValidArgsFunction = completeFirst(f, src)
		}
	}
	if chat, _, err := root.Find([]string{"chat"}); err == nil {
		_ = chat.RegisterFlagCompletionFunc("resume", completeWith(f, sessionIDs))
	}
}

// completeFirst completes the first positional argument from src; later ones
// (none of these verbs takes more) get nothing, and never file names.
func completeFirst(f *app.Factory, src nameSource) cobra.CompletionFunc {
	with := completeWith(f, src)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return with(cmd, args, toComplete)
	}
}

func completeWith(f *app.Factory, src nameSource) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, c := range src(cmd.Context(), f) {
			name, _, _ := strings.Cut(c, "\t")
			if strings.HasPrefix(name, toComplete) {
				out = append(out, c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// describe is a completion with a one-line description (shells that show them
// cut long ones themselves; a newline or tab would break the protocol).
func describe(name, desc string) cobra.Completion {
	desc = strings.Join(strings.Fields(desc), " ")
	if r := []rune(desc); len(r) > 60 {
		desc = string(r[:59]) + "…"
	}
	if desc == "" {
		return name
	}
	return cobra.CompletionWithDesc(name, desc)
}

// pluginNames lists the discovered plugins that keep passes (nil: all).
func pluginNames(keep func(*plugins.Plugin) bool) nameSource {
	return func(ctx context.Context, f *app.Factory) []cobra.Completion {
		h, err := f.Host(ctx)
		if err != nil {
			return nil
		}
		defer h.Close()
		var out []cobra.Completion
		for _, p := range h.Plugins() {
			if keep == nil || keep(p) {
				out = append(out, describe(p.Key, p.Candidate.Manifest.Description))
			}
		}
		return out
	}
}

// installedNames lists the plugin folders update and remove work on.
func installedNames(_ context.Context, f *app.Factory) []cobra.Completion {
	h, err := f.Home()
	if err != nil {
		return nil
	}
	return install.Installed(h.PluginsDir())
}

// toolNames lists the built-in tools and those the enabled plugins registered
// at their last load.
func toolNames(ctx context.Context, f *app.Factory) []cobra.Completion {
	h, err := f.Host(ctx)
	if err != nil {
		return nil
	}
	defer h.Close()
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, t := range h.Registry.Tools().List() {
		seen[t.Name] = true
		out = append(out, describe(t.Name, t.ModelDescription()))
	}
	for _, n := range h.CachedToolNames() {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// sessionCompletions bounds how many recent sessions are offered.
const sessionCompletions = 200

// sessionIDs lists the most recent sessions, described by title or first words.
func sessionIDs(ctx context.Context, f *app.Factory) []cobra.Completion {
	s, err := f.Sessions(ctx, true)
	if err != nil || s == nil {
		return nil
	}
	defer func() { _ = s.Close() }()
	list, err := s.List(ctx, sessionCompletions)
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(list))
	for _, sess := range list {
		desc := sess.Title
		if desc == "" {
			desc = sess.Preview
		}
		out = append(out, describe(sess.ID, desc))
	}
	return out
}
