package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// errQuit ends the interactive loop.
var errQuit = errors.New("quit")

// builtinSlash are the session commands hermes itself serves.
var builtinSlash = []struct{ name, args, help string }{
	{"help", "", "list the commands"},
	{"plugins", "", "what is loaded, with errors"},
	{"tools", "", "the tools the model can call"},
	{"new", "", "start a new session"},
	{"quit", "", "leave (also /exit, Ctrl-D)"},
}

// slash runs a /command: built-in or a plugin's, firing pre_command first.
func (cs *chatSession) slash(ctx context.Context, line string) error {
	name, rawArgs, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	typed := strings.ToLower(strings.TrimSpace(name))
	canonical := typed
	if typed == "exit" {
		canonical = "quit"
	}
	cmd, isPlugin := cs.pluginCommand(canonical)
	known := isPlugin
	for _, b := range builtinSlash {
		if b.name == canonical {
			known = true
		}
	}
	if !known {
		fmt.Fprintf(cs.f.IO.Err, "Unknown command /%s; /help lists the commands.\n", typed)
		return nil
	}
	if cs.hooks.Has(hooks.HookPreCommand) {
		alias := any(nil)
		if typed != canonical {
			alias = typed
		}
		cs.hooks.Fire(ctx, hooks.HookPreCommand, map[string]any{
			"surface": "cli", "command": canonical, "alias_used": alias, "args_raw": strings.TrimSpace(rawArgs),
			"session_key": cs.sess.ID, "platform": "cli",
		})
	}
	out := cs.f.IO.Out
	switch canonical {
	case "help":
		fmt.Fprintln(out, "Commands:")
		for _, b := range builtinSlash {
			fmt.Fprintf(out, "  /%-12s %s\n", b.name, b.help)
		}
		cmds := cs.reg.Commands()
		sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
		for _, c := range cmds {
			usage := "/" + c.Name
			if c.ArgsHint != "" {
				usage += " " + c.ArgsHint
			}
			fmt.Fprintf(out, "  %-13s %s (plugin %s)\n", usage, c.Description, c.Plugin)
		}
		return nil
	case "plugins":
		n := 0
		for _, p := range cs.m.Plugins() {
			if !p.Decision.Starts() {
				continue
			}
			n++
			state := "loaded"
			if e := p.ErrorText(); e != "" {
				state = "error: " + e
			}
			fmt.Fprintf(out, "  %-24s %s\n", p.Key, state)
		}
		if n == 0 {
			fmt.Fprintln(out, "No plugins are enabled (hermes plugins enable NAME).")
		}
		return nil
	case "tools":
		for _, t := range cs.reg.Tools().List() {
			fmt.Fprintf(out, "  %-24s %-12s %s\n", t.Name, t.Toolset, firstLine(t.ModelDescription()))
		}
		return nil
	case "new":
		return cs.newSession(ctx)
	case "quit":
		return errQuit
	}
	res, ok, err := cmd.Run(ctx, rawArgs)
	switch {
	case err != nil:
		fmt.Fprintf(cs.f.IO.Err, "/%s failed: %v\n", canonical, err)
	case ok:
		fmt.Fprintln(out, res)
	}
	return nil
}

func (cs *chatSession) pluginCommand(name string) (*registry.Command, bool) {
	for _, c := range cs.reg.Commands() {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// newSession ends the current session and starts another: finalize the old one,
// reset to the new one; on_session_start fires with its first turn.
func (cs *chatSession) newSession(ctx context.Context) error {
	old := cs.sess.ID
	id, err := cs.store.Create(ctx, cs.model, "cli")
	if err != nil {
		return err
	}
	_ = cs.store.End(ctx, old)
	if cs.hooks.Has(hooks.HookOnSessionFinalize) {
		cs.hooks.Fire(ctx, hooks.HookOnSessionFinalize, map[string]any{"session_id": old, "platform": "cli",
			"reason": "new_session", "old_session_id": old, "new_session_id": id})
	}
	if cs.hooks.Has(hooks.HookOnSessionReset) {
		cs.hooks.Fire(ctx, hooks.HookOnSessionReset, map[string]any{"session_id": id, "platform": "cli", "reason": "new_session"})
	}
	cs.sess = cs.ag.NewSession(ctx, id)
	if cs.m.Approver != nil {
		cs.m.Approver.SessionKey = id
	}
	fmt.Fprintf(cs.f.IO.Err, "New session %s\n", id)
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}
