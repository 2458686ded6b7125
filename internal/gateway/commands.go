package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// builtinCommands are the chat commands the gateway serves itself, in /help's order.
var builtinCommands = []struct{ name, help string }{
	{"new", "start a new session (also /reset)"},
	{"stop", "stop what I am doing"},
	{"status", "this session: its id, model and size"},
	{"usage", "tokens used in this session"},
	{"whoami", "who you are to the gateway"},
	{"approve", "approve the pending command (/approve session|always)"},
	{"deny", "deny the pending command"},
	{"help", "list the commands"},
}

// parseCommand splits "/name@bot args" into name (lower case) and args; ok
// is false for text that is not a command.
func parseCommand(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	head, args, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexByte(head, '\n'); i >= 0 {
		head, args = head[:i], head[i+1:]+" "+args
	}
	head, _, _ = strings.Cut(head, "@") // /status@hermes_bot in groups
	if head == "" || strings.ContainsAny(head, "/.") {
		return "", "", false // a path, not a command
	}
	return strings.ToLower(head), strings.TrimSpace(args), true
}

func (r *Runner) pluginCommand(name string) (*registry.Command, bool) {
	if r.o.Commands == nil {
		return nil, false
	}
	for _, c := range r.o.Commands.Commands() {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// command runs a chat command; false means name is no command (the text goes
// to the agent, as upstream passes unknown /words on).
func (r *Runner) command(ctx context.Context, a platform.Adapter, ev platform.Event, key, name, args string) bool {
	canonical := name
	if name == "reset" {
		canonical = "new"
	}
	reply := func(text string) {
		r.send(a, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, Text: text})
	}
	switch canonical {
	case "stop":
		// The running-agent intercept: no pre_command (upstream).
		if r.interrupt(key, errStopped) {
			reply("⚡ Stopped.")
		} else {
			reply("Nothing is running.")
		}
		return true
	case "approve", "deny":
		// Answers the running turn's question: no pre_command (upstream).
		if text := r.approveCommand(key, canonical, args); text != "" {
			reply(text)
		}
		return true
	}
	cmd, isPlugin := r.pluginCommand(canonical)
	known := isPlugin
	for _, b := range builtinCommands {
		known = known || b.name == canonical
	}
	if !known {
		return false
	}
	r.preCommand(ctx, name, canonical, args, key, ev.Source.Platform)
	switch canonical {
	case "new":
		r.interrupt(key, errStopped)
		id, err := r.o.Engine.NewSession(ctx, key, ev.Source)
		if err != nil {
			r.log.Warn("gateway: /new failed", "session_key", key, "error", err)
			reply("⚠️ Could not start a new session: " + err.Error())
			return true
		}
		reply("✨ New session started (" + id + ").")
	case "status":
		reply(r.status(ctx, key))
	case "usage":
		reply(r.usage(ctx, key))
	case "whoami":
		r.mu.Lock()
		rule := r.authorized[key]
		r.mu.Unlock()
		s := ev.Source
		reply(fmt.Sprintf("Platform: %s\nUser: %s (id %s)\nChat: %s (%s)\nSession key: %s\nAllowed by: %s",
			s.Platform, orDash(s.UserName), orDash(s.UserID), orDash(s.ChatID), s.ChatType, key, rule))
	case "help":
		reply(r.help())
	default:
		r.running.Add(1)
		go func() {
			defer r.running.Done()
			out, ok, err := cmd.Run(context.WithoutCancel(ctx), args)
			switch {
			case err != nil:
				reply(fmt.Sprintf("⚠️ /%s failed: %v", canonical, err))
			case ok && strings.TrimSpace(out) != "":
				reply(out)
			}
		}()
	}
	return true
}

// interrupt stops key's running turn and drops what waited behind it; it
// reports whether a turn was running.
func (r *Runner) interrupt(key string, cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.lanes[key]
	if !ok {
		return false
	}
	l.pending, l.steer = nil, nil
	if l.cancel == nil {
		return false
	}
	l.cancel(cause)
	return true
}

func (r *Runner) preCommand(ctx context.Context, typed, canonical, args, key, pl string) {
	if r.o.Hooks == nil || !r.o.Hooks.Has(hooks.HookPreCommand) {
		return
	}
	alias := any(nil)
	if typed != canonical {
		alias = typed
	}
	r.o.Hooks.Fire(ctx, hooks.HookPreCommand, map[string]any{"surface": "gateway", "command": canonical, "alias_used": alias,
		"args_raw": args, "session_key": key, "platform": pl})
}

func (r *Runner) status(ctx context.Context, key string) string {
	info, err := r.o.Engine.Info(ctx, key)
	if err != nil {
		return "⚠️ Could not read the session: " + err.Error()
	}
	r.mu.Lock()
	l, busy := r.lanes[key]
	running := busy && l.cancel != nil
	r.mu.Unlock()
	if !info.Exists {
		return "No session yet: say something to start one.\nSession key: " + key
	}
	state := "idle"
	if running {
		state = "working"
	}
	return fmt.Sprintf("Session: %s\nSession key: %s\nModel: %s\nMessages: %d\nState: %s", info.SessionID, key, info.Model, info.Messages, state)
}

func (r *Runner) usage(ctx context.Context, key string) string {
	info, err := r.o.Engine.Info(ctx, key)
	if err != nil {
		return "⚠️ Could not read the session: " + err.Error()
	}
	if !info.Exists {
		return "No session yet."
	}
	u := info.Usage
	return fmt.Sprintf("Tokens used in session %s since the gateway started:\nInput: %d\nOutput: %d\nTotal: %d",
		info.SessionID, u.PromptTokens, u.CompletionTokens, u.TotalTokens)
}

func (r *Runner) help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range builtinCommands {
		fmt.Fprintf(&b, "/%s — %s\n", c.name, c.help)
	}
	if r.o.Commands != nil {
		for _, c := range r.o.Commands.Commands() {
			usage := "/" + c.Name
			if c.ArgsHint != "" {
				usage += " " + c.ArgsHint
			}
			fmt.Fprintf(&b, "%s — %s (plugin %s)\n", usage, c.Description, c.Plugin)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
