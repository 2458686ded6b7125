package hostapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// LocalContext is pluginsdk.Context for a plugin compiled into hermes: the
// same registration checks and facades as the protocol's, called in-process.
// onUnload keeps the plugin's OnUnload callbacks for the manager to run.
func (s *Session) LocalContext(profile string, onUnload func(fn func())) pluginsdk.Context {
	return &localContext{s: s, profile: profile, onUnload: onUnload}
}

type localContext struct {
	s        *Session
	profile  string
	onUnload func(fn func())
}

var _ pluginsdk.Context = (*localContext)(nil)

func (c *localContext) PluginID() string    { return c.s.p.ID() }
func (c *localContext) ProfileName() string { return c.profile }
func (c *localContext) Manifest() map[string]any {
	if c.s.p.Manifest() == nil {
		return nil
	}
	return c.s.p.Manifest().Raw
}
func (c *localContext) Logger() *slog.Logger { return c.s.h.log.With("plugin", c.s.p.ID()) }

func asGoErr(v any, err error) error {
	if err != nil {
		return err
	}
	if r, ok := v.(protocol.RegisterResult); ok && !r.Registered {
		return errors.New(r.Warning)
	}
	return nil
}

func (c *localContext) RegisterTool(t pluginsdk.Tool) error {
	if t.Handler == nil {
		return errors.New("RegisterTool: Handler is required")
	}
	schema := map[string]any{"name": t.Name, "description": t.Description}
	if t.Parameters != nil {
		schema["parameters"] = t.Parameters
	}
	h := t.Handler
	handler := func(ctx context.Context, args, kwargs map[string]any) (string, error) {
		call := pluginsdk.ToolCall{Args: args}
		call.TaskID, _ = kwargs["task_id"].(string)
		call.SessionID, _ = kwargs["session_id"].(string)
		call.ToolCallID, _ = kwargs["tool_call_id"].(string)
		out, err := h(ctx, call)
		if err != nil {
			return "", &tools.ToolError{Type: "error", Message: "Tool execution failed: " + err.Error()}
		}
		return out, nil
	}
	rp := protocol.RegisterToolParams{Name: t.Name, Toolset: t.Toolset, Schema: schema, RequiresEnv: t.RequiresEnv,
		Description: t.Description, Emoji: t.Emoji, Override: t.Override}
	return asGoErr(c.s.RegisterTool(rp, handler, t.Check))
}

func (c *localContext) RegisterHook(hook string, fn pluginsdk.HookFunc) error {
	c.s.RegisterHook(hook, hook, func(ctx context.Context, payload map[string]any) (any, error) { return fn(ctx, payload) })
	return nil
}

func (c *localContext) RegisterCommand(cmd pluginsdk.Command) error {
	h := cmd.Handler
	if h == nil {
		return errors.New("RegisterCommand: Handler is required")
	}
	run := func(ctx context.Context, raw string) (string, bool, error) {
		out, err := h(ctx, raw)
		return out, err == nil, err
	}
	return asGoErr(c.s.RegisterCommand(protocol.RegisterCommandParams{Name: cmd.Name, Description: cmd.Description, ArgsHint: cmd.ArgsHint}, run))
}

func (c *localContext) RegisterCLICommand(cmd pluginsdk.CLICommand) error {
	r := cmd.Run
	if r == nil {
		return errors.New("RegisterCLICommand: Run is required")
	}
	run := func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
		return r(ctx, argv, stdout, stderr), nil
	}
	return asGoErr(c.s.RegisterCLICommand(cmd.Name, cmd.Help, cmd.Description, run))
}

func (c *localContext) Subscribe(event string, fn pluginsdk.EventFunc) error {
	c.s.Subscribe(event, func(ctx context.Context, ev string, payload map[string]any) error {
		return fn(ctx, ev, payload)
	})
	return nil
}

func (c *localContext) OnUnload(fn func()) { c.onUnload(fn) }

func (c *localContext) GetConfig(key string, def any) (any, error) {
	return getConfig(context.Background(), c.s, protocol.ConfigGetParams{Key: key, Default: def})
}

func (c *localContext) SetConfig(key string, value any) error {
	_, err := setConfig(context.Background(), c.s, protocol.ConfigSetParams{Key: key, Value: value})
	return err
}

func (c *localContext) StateGet(key string, def any) (any, error) {
	return stateGet(context.Background(), c.s, protocol.StateGetParams{Key: key, Default: def})
}

func (c *localContext) StateSet(key string, value any) error {
	return c.s.setState(context.Background(), key, value)
}

func (c *localContext) HasPlugin(id string) bool {
	return id != c.s.p.ID() && c.s.h.opts.Plugins.HasPlugin(id)
}

func (c *localContext) HasCapability(id string) bool { return c.s.HasCapability(id) }

func (c *localContext) DispatchTool(ctx context.Context, name string, args map[string]any) (string, error) {
	return c.s.dispatchTool(ctx, name, args, nil), nil
}

func (c *localContext) CallMCP(ctx context.Context, server, tool string, args map[string]any, timeout time.Duration) (pluginsdk.MCPResult, error) {
	var arguments any
	if args != nil {
		arguments = args
	}
	env, err := c.s.CallMCP(ctx, server, tool, arguments, timeout)
	var perr *protocol.Error
	if errors.As(err, &perr) && perr.Code == protocol.CodePermission {
		return pluginsdk.MCPResult{}, &pluginsdk.MCPNotAllowedError{Server: server, Message: perr.Message}
	}
	if err != nil {
		return pluginsdk.MCPResult{}, err
	}
	return pluginsdk.MCPResultFrom(env)
}

func (c *localContext) Emit(event string, payload map[string]any) (int, error) {
	return c.s.h.events.emit(c.s.p, event, payload)
}

func (c *localContext) RegisterRedactionPatterns(patterns []string) int {
	items := make([]any, len(patterns))
	for i, p := range patterns {
		items[i] = p
	}
	v, err := registerRedactionPatterns(context.Background(), c.s, protocol.RegisterOtherParams{
		Registrar: "register_redaction_patterns", Details: map[string]any{"patterns": items}})
	if m, ok := v.(map[string]int); ok && err == nil {
		return m["accepted"]
	}
	return 0
}

func (c *localContext) RegisterAuxiliaryTask(t pluginsdk.AuxiliaryTask) error {
	return asGoErr(registerOther(context.Background(), c.s, protocol.AuxiliaryTaskParams(t.Key, t.DisplayName, t.Description, t.Defaults)))
}

func (c *localContext) RegisterContextReference(ref pluginsdk.ContextReference) error {
	if ref.Expand == nil {
		return errors.New("RegisterContextReference: Expand is required")
	}
	return asGoErr(c.s.RegisterContextRef(ref.Prefix, ref.Description, ref.Expand))
}
