package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// builtinState is what an in-process plugin needs beyond its registrations.
type builtinState struct {
	mu     sync.Mutex
	unload []func()
}

func (m *Manager) builtinFor(key string) pluginsdk.Plugin {
	for _, b := range m.opts.Builtins {
		if b.Manifest != nil && b.Manifest.Name == key {
			return b.Plugin
		}
	}
	return nil
}

// startBuiltin runs a compiled-in plugin's Register in-process.
func (m *Manager) startBuiltin(ctx context.Context, p *Plugin) (err error) {
	impl := m.builtinFor(p.Key)
	if impl == nil {
		return fmt.Errorf("compiled-in plugin %s has no implementation", p.Key)
	}
	p.mu.Lock()
	p.builtin = &builtinState{}
	p.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("register panicked: %v", r)
		}
	}()
	return impl.Register(&localContext{m: m, p: p})
}

func (m *Manager) runBuiltinUnload() {
	for _, p := range m.Plugins() {
		p.mu.Lock()
		st := p.builtin
		p.mu.Unlock()
		if st == nil {
			continue
		}
		st.mu.Lock()
		fns := st.unload
		st.unload = nil
		st.mu.Unlock()
		for i := len(fns) - 1; i >= 0; i-- {
			func() {
				defer func() { _ = recover() }()
				fns[i]()
			}()
		}
	}
}

// localContext implements pluginsdk.Context for compiled-in plugins, calling the same
// registration paths the protocol handler uses.
type localContext struct {
	m *Manager
	p *Plugin
}

var _ pluginsdk.Context = (*localContext)(nil)

func (c *localContext) PluginID() string    { return c.p.Key }
func (c *localContext) ProfileName() string { return c.m.opts.Home.Profile }
func (c *localContext) Manifest() map[string]any {
	if c.p.Candidate.Manifest == nil {
		return nil
	}
	return c.p.Candidate.Manifest.Raw
}
func (c *localContext) Logger() *slog.Logger { return c.m.log.With("plugin", c.p.Key) }

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
	return asGoErr(c.m.registerTool(c.p, rp, handler, t.Check))
}

func (c *localContext) RegisterHook(hook string, fn pluginsdk.HookFunc) error {
	c.m.addHook(c.p, hook, hook, func(ctx context.Context, payload map[string]any) (any, error) { return fn(ctx, payload) })
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
	return asGoErr(c.m.registerCommand(c.p, protocol.RegisterCommandParams{Name: cmd.Name, Description: cmd.Description, ArgsHint: cmd.ArgsHint}, run))
}

func (c *localContext) RegisterCLICommand(cmd pluginsdk.CLICommand) error {
	r := cmd.Run
	if r == nil {
		return errors.New("RegisterCLICommand: Run is required")
	}
	run := func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
		return r(ctx, argv, stdout, stderr), nil
	}
	return asGoErr(c.m.registerCLICommand(c.p, cmd.Name, cmd.Help, cmd.Description, run))
}

func (c *localContext) Subscribe(event string, fn pluginsdk.EventFunc) error {
	c.m.addSubscription(c.p, event, func(ctx context.Context, ev string, payload map[string]any) error {
		return fn(ctx, ev, payload)
	})
	return nil
}

func (c *localContext) OnUnload(fn func()) {
	c.p.mu.Lock()
	st := c.p.builtin
	c.p.mu.Unlock()
	st.mu.Lock()
	st.unload = append(st.unload, fn)
	st.mu.Unlock()
}

func (c *localContext) GetConfig(key string, def any) (any, error) {
	return c.m.getConfig(c.p, key, def)
}
func (c *localContext) SetConfig(key string, value any) error {
	return c.m.setConfig(context.Background(), c.p, key, value)
}
func (c *localContext) StateGet(key string, def any) (any, error) { return c.m.stateGet(c.p, key, def) }
func (c *localContext) StateSet(key string, value any) error {
	return c.m.stateSet(context.Background(), c.p, key, value)
}
func (c *localContext) HasPlugin(id string) bool     { return id != c.p.Key && c.m.HasPlugin(id) }
func (c *localContext) HasCapability(id string) bool { return c.m.HasCapability(c.p, id) }
func (c *localContext) DispatchTool(ctx context.Context, name string, args map[string]any) (string, error) {
	return c.m.DispatchTool(ctx, name, args, nil), nil
}
func (c *localContext) Emit(event string, payload map[string]any) (int, error) {
	return c.m.bus.emit(c.p, event, payload)
}
