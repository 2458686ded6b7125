package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// errQuit ends the interactive loop.
var errQuit = errors.New("quit")

// builtinSlash are the session commands hermes itself serves.
var builtinSlash = []struct{ name, args, help string }{
	{"help", "", "list the commands"},
	{"plugins", "", "what is loaded, with errors"},
	{"tools", "", "the tools the model can call"},
	{"reload-mcp", "", "re-read mcp_servers and reconnect the MCP servers"},
	{"new", "", "start a new session"},
	{"compress", "[focus]", "compact the conversation now (the middle becomes a summary)"},
	{"usage", "", "tokens (and cost) of the last turn and the session"},
	{"retry", "", "send the last message again, in place of its answer"},
	{"undo", "", "drop the last exchange (also from state.db)"},
	{"title", "[text]", "show or set the session's title"},
	{"model", "[provider:]model", "switch the model for this session"},
	{"sessions", "", "the recent sessions"},
	// Upstream's registry lists it for the CLI too (Session, "[name]").
	{"resume", "[ID]", "continue a stored session (on the full screen without ID: a picker)"},
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
	cmd, isPlugin := cs.chat.Command(canonical)
	known := isPlugin
	for _, b := range builtinSlash {
		if b.name == canonical {
			known = true
		}
	}
	if !known {
		sayf(cs.io.Err, "Unknown command /%s; /help lists the commands.\n", typed)
		return nil
	}
	cs.chat.PreCommand(ctx, typed, canonical, rawArgs)
	out := cs.io.Out
	switch canonical {
	case "help":
		fmt.Fprintln(out, "Commands:")
		for _, b := range builtinSlash {
			usage := "/" + b.name
			if b.args != "" {
				usage += " " + b.args
			}
			fmt.Fprintf(out, "  %-26s %s\n", usage, b.help)
		}
		for _, c := range cs.chat.Commands() { // sorted by name
			usage := "/" + c.Name
			if c.ArgsHint != "" {
				usage += " " + c.ArgsHint
			}
			sayf(out, "  %-26s %s (plugin %s)\n", usage, c.Description, c.Plugin)
		}
		return nil
	case "plugins":
		n := 0
		for _, p := range cs.chat.Plugins() {
			if !p.Decision.Starts() {
				continue
			}
			n++
			sayf(out, "  %-24s %s\n", p.Key, stateLine(p, true))
		}
		if n == 0 {
			fmt.Fprintln(out, "No plugins are enabled (hermes plugins enable NAME).")
		}
		return nil
	case "tools":
		for _, t := range cs.chat.Tools() {
			sayf(out, "  %-24s %-12s %s\n", t.Name, t.Toolset, firstLine(t.ModelDescription()))
		}
		return nil
	case "reload-mcp":
		n, err := cs.chat.ReloadMCP(ctx)
		if err != nil {
			sayf(cs.io.Err, "/reload-mcp failed: %v\n", err)
			return nil
		}
		fmt.Fprintf(out, "MCP servers reloaded: %d offering tools\n", n)
		return nil
	case "new":
		return cs.newSession(ctx)
	case "compress":
		res, err := cs.chat.Compress(ctx, strings.TrimSpace(rawArgs))
		if err != nil {
			sayf(cs.io.Err, "/compress failed: %v\n", err)
			return nil
		}
		sayf(out, "%s\n", res.Line())
		return nil
	case "usage", "retry", "undo", "title", "model", "sessions", "resume":
		cs.sessionCommand(ctx, canonical, strings.TrimSpace(rawArgs))
		return nil
	case "quit":
		return errQuit
	}
	res, ok, err := cmd.Run(ctx, rawArgs)
	switch {
	case err != nil:
		sayf(cs.io.Err, "/%s failed: %v\n", canonical, err)
	case ok:
		fmt.Fprintln(out, safeText(res)) // the plugin's answer
	}
	return nil
}

// newSession ends the current session and starts another.
func (cs *chatSession) newSession(ctx context.Context) error {
	id, err := cs.chat.NewSession(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(cs.io.Err, "New session %s\n", id)
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncate(s, 70)
}
