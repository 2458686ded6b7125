package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// Serve runs p as a plugin process started by hermes and exits when hermes is done
// with it. Run by hand, it explains that and exits with status 2.
func Serve(p Plugin) {
	os.Exit(serve(p))
}

func serve(p Plugin) int {
	if os.Getenv(protocol.EnvMagicCookie) != protocol.MagicCookieValue {
		fmt.Fprintln(os.Stderr, "This program is a hermes plugin: hermes starts it (runtime: exec in plugin.yaml); it is not run by hand.")
		return 2
	}
	in, err1 := fdFile(protocol.EnvFDIn, "hermes-in")
	out, err2 := fdFile(protocol.EnvFDOut, "hermes-out")
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "hermes plugin:", err)
		return 2
	}
	s := &server{plugin: p, handles: map[string]any{}, done: make(chan struct{})}
	s.conn = protocol.NewConn(in, out, s.handle, protocol.ConnOptions{})
	go func() {
		_ = s.conn.Run()
		s.stop()
	}()
	<-s.done
	s.runUnload()
	return 0
}

func fdFile(env, name string) (*os.File, error) {
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil || n < 3 {
		return nil, fmt.Errorf("%s is not set to a protocol file descriptor", env)
	}
	return os.NewFile(uintptr(n), name), nil
}

type server struct {
	plugin Plugin
	conn   *protocol.Conn
	info   protocol.InitializeParams

	mu      sync.Mutex
	next    int
	handles map[string]any
	unload  []func()
	memory  map[string]MemoryProvider // RegisterMemoryProvider's, by name
	// RegisterProvider's and RegisterContextEngine's, by name
	providers map[string]*ProviderProfile
	engines   map[string]ContextEngine
	stopOnce  sync.Once
	done      chan struct{}
}

func (s *server) stop() { s.stopOnce.Do(func() { close(s.done) }) }

func (s *server) addHandle(v any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := "g" + strconv.Itoa(s.next)
	s.handles[id] = v
	return id
}

func (s *server) lookup(id string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.handles[id]
	if !ok {
		return nil, protocol.Errorf(protocol.CodeNotFound, "unknown handle %s", id)
	}
	return v, nil
}

func (s *server) runUnload() {
	s.mu.Lock()
	fns := s.unload
	s.unload = nil
	s.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		func() {
			defer func() { _ = recover() }()
			fns[i]()
		}()
	}
}

// handlerErr wraps a plugin error the way the host expects exceptions.
func handlerErr(err error, typ string) error {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return perr
	}
	data, _ := json.Marshal(protocol.HandlerErrorData{Type: typ})
	return &protocol.Error{Code: protocol.CodeHandlerError, Message: err.Error(), Data: data}
}

func (s *server) handle(ctx context.Context, method string, params json.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The type already says panic: the host shows "<type>: <message>".
			err = handlerErr(fmt.Errorf("%v", r), "panic")
		}
	}()
	switch method {
	case protocol.MethodInitialize:
		if err := json.Unmarshal(params, &s.info); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		if s.info.ProtocolVersion != protocol.Version {
			return nil, protocol.Errorf(protocol.CodeInvalidRequest, "protocol version %d not supported (SDK speaks %d)", s.info.ProtocolVersion, protocol.Version)
		}
		return protocol.InitializeResult{ProtocolVersion: protocol.Version, Runtime: "go", RuntimeVersion: goVersion()}, nil
	case protocol.MethodRegister:
		if err := s.plugin.Register(&remoteContext{s: s}); err != nil {
			return nil, handlerErr(err, "RegisterError")
		}
		return map[string]bool{"ok": true}, nil
	case protocol.MethodShutdown:
		defer s.stop()
		return map[string]bool{"ok": true}, nil
	case protocol.MethodPing:
		return map[string]bool{"pong": true}, nil
	case protocol.MethodToolCall:
		var p protocol.ToolCallParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		call := ToolCall{Args: p.Args}
		call.TaskID, _ = p.Kwargs["task_id"].(string)
		call.SessionID, _ = p.Kwargs["session_id"].(string)
		call.ToolCallID, _ = p.Kwargs["tool_call_id"].(string)
		out, err := v.(ToolFunc)(context.WithValue(ctx, dispatchDepthKey{}, p.DispatchDepth), call)
		if err != nil {
			return nil, handlerErr(err, "ToolError")
		}
		return out, nil
	case protocol.MethodHookCall:
		var p protocol.HookCallParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		out, err := v.(HookFunc)(ctx, p.Kwargs)
		if err != nil {
			return nil, handlerErr(err, "HookError")
		}
		return out, nil
	case protocol.MethodCommand:
		var p protocol.CommandCallParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		out, err := v.(func(context.Context, string) (string, error))(ctx, p.RawArgs)
		if err != nil {
			return nil, handlerErr(err, "CommandError")
		}
		return out, nil
	case protocol.MethodContextRefExpand:
		var p struct {
			Handle string `json:"handle"`
			Target string `json:"target"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		text, ok, err := v.(func(context.Context, string) (string, bool, error))(ctx, p.Target)
		if err != nil {
			return nil, handlerErr(err, "ContextReferenceError")
		}
		if !ok {
			return nil, nil
		}
		return text, nil
	case protocol.MethodMemoryInitialize, protocol.MethodMemoryIsAvailable, protocol.MethodMemorySystemPromptBlock,
		protocol.MethodMemoryPrefetch, protocol.MethodMemoryQueuePrefetch, protocol.MethodMemorySyncTurn,
		protocol.MethodMemoryToolSchemas, protocol.MethodMemoryToolCall, protocol.MethodMemoryTurnStart,
		protocol.MethodMemorySessionEnd, protocol.MethodMemorySessionSwitch, protocol.MethodMemoryPreCompress,
		protocol.MethodMemoryWrite, protocol.MethodMemoryConfigSchema, protocol.MethodMemorySaveConfig,
		protocol.MethodMemoryUnavailable, protocol.MethodMemoryShutdown:
		return s.serveMemory(ctx, method, params)
	case protocol.MethodModelProviderCall:
		return s.serveModelProvider(ctx, params)
	case protocol.MethodContextEngineCall:
		return s.serveContextEngine(ctx, params)
	case protocol.MethodCheck:
		var p protocol.CheckCallParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		return v.(func(context.Context) bool)(ctx), nil
	case protocol.MethodEvent:
		var p protocol.EventParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.Handle)
		if err != nil {
			return nil, err
		}
		if err := v.(EventFunc)(ctx, p.Event, p.Payload); err != nil {
			return nil, handlerErr(err, "EventError")
		}
		return nil, nil
	case protocol.MethodCLIRun:
		var p protocol.CLIRunParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "%v", err)
		}
		v, err := s.lookup(p.HandlerHandle)
		if err != nil {
			return nil, err
		}
		code := v.(func(context.Context, []string, io.Writer, io.Writer) int)(ctx, p.Argv, os.Stdout, os.Stderr)
		return protocol.CLIRunResult{ExitCode: code}, nil
	}
	return nil, protocol.Errorf(protocol.CodeMethodNotFound, "plugin has no method %q", method)
}

// remoteContext implements Context over the protocol connection.
type remoteContext struct {
	s *server
}

func (c *remoteContext) call(method string, params, result any) error {
	err := c.s.conn.Call(context.Background(), method, params, result)
	var perr *protocol.Error
	if errors.As(err, &perr) {
		return fmt.Errorf("%s", perr.Message)
	}
	return err
}

func (c *remoteContext) PluginID() string         { return c.s.info.Plugin.ID }
func (c *remoteContext) ProfileName() string      { return c.s.info.ProfileName }
func (c *remoteContext) Manifest() map[string]any { return c.s.info.Plugin.Manifest }
func (c *remoteContext) Logger() *slog.Logger {
	return slog.New(&logHandler{conn: c.s.conn, level: slog.LevelInfo})
}

func (c *remoteContext) RegisterTool(t Tool) error {
	if t.Handler == nil {
		return errors.New("RegisterTool: Handler is required")
	}
	schema := map[string]any{"name": t.Name, "description": t.Description}
	if t.Parameters != nil {
		schema["parameters"] = t.Parameters
	}
	p := protocol.RegisterToolParams{
		Name: t.Name, Toolset: t.Toolset, Schema: schema, Handle: c.s.addHandle(t.Handler),
		RequiresEnv: t.RequiresEnv, Description: t.Description, Emoji: t.Emoji, Override: t.Override,
	}
	if t.Check != nil {
		p.CheckHandle = c.s.addHandle(t.Check)
	}
	var res protocol.RegisterResult
	if err := c.call(protocol.MethodRegisterTool, p, &res); err != nil {
		return err
	}
	if !res.Registered {
		return fmt.Errorf("tool %s was not registered: %s", t.Name, res.Warning)
	}
	return nil
}

func (c *remoteContext) RegisterHook(hook string, fn HookFunc) error {
	return c.call(protocol.MethodRegisterHook, protocol.RegisterHookParams{Hook: hook, Handle: c.s.addHandle(fn), Callback: hook}, nil)
}

func (c *remoteContext) RegisterCommand(cmd Command) error {
	if cmd.Handler == nil {
		return errors.New("RegisterCommand: Handler is required")
	}
	return c.call(protocol.MethodRegisterCommand, protocol.RegisterCommandParams{
		Name: cmd.Name, Handle: c.s.addHandle(cmd.Handler), Description: cmd.Description, ArgsHint: cmd.ArgsHint,
	}, nil)
}

func (c *remoteContext) RegisterCLICommand(cmd CLICommand) error {
	if cmd.Run == nil {
		return errors.New("RegisterCLICommand: Run is required")
	}
	return c.call(protocol.MethodRegisterCLICommand, protocol.RegisterCLICommandParams{
		Name: cmd.Name, Help: cmd.Help, Description: cmd.Description, HandlerHandle: c.s.addHandle(cmd.Run),
	}, nil)
}

func (c *remoteContext) Subscribe(event string, fn EventFunc) error {
	return c.call(protocol.MethodSubscribe, protocol.SubscribeParams{Event: event, Handle: c.s.addHandle(fn)}, nil)
}

func (c *remoteContext) OnUnload(fn func()) {
	c.s.mu.Lock()
	c.s.unload = append(c.s.unload, fn)
	c.s.mu.Unlock()
}

func (c *remoteContext) GetConfig(key string, def any) (any, error) {
	var v any
	err := c.call(protocol.MethodGetConfig, protocol.ConfigGetParams{Key: key, Default: def}, &v)
	return v, err
}

func (c *remoteContext) SetConfig(key string, value any) error {
	return c.call(protocol.MethodSetConfig, protocol.ConfigSetParams{Key: key, Value: value}, nil)
}

func (c *remoteContext) StateGet(key string, def any) (any, error) {
	var v any
	err := c.call(protocol.MethodStateGet, protocol.StateGetParams{Key: key, Default: def}, &v)
	return v, err
}

func (c *remoteContext) StateSet(key string, value any) error {
	return c.call(protocol.MethodStateSet, protocol.StateSetParams{Key: key, Value: value}, nil)
}

func (c *remoteContext) HasPlugin(id string) bool {
	var ok bool
	_ = c.call(protocol.MethodHasPlugin, protocol.NameParams{Name: id}, &ok)
	return ok
}

func (c *remoteContext) HasCapability(id string) bool {
	var ok bool
	_ = c.call(protocol.MethodHasCapability, protocol.NameParams{Name: id}, &ok)
	return ok
}

// dispatchDepthKey carries, in a tool handler's context, how many dispatch_tool
// calls the call runs under; DispatchTool hands it back to the host.
type dispatchDepthKey struct{}

func (c *remoteContext) DispatchTool(ctx context.Context, name string, args map[string]any) (string, error) {
	var out string
	depth, _ := ctx.Value(dispatchDepthKey{}).(int)
	err := c.s.conn.Call(ctx, protocol.MethodDispatchTool, protocol.DispatchToolParams{ToolName: name, Args: args, Depth: depth}, &out)
	return out, err
}

func (c *remoteContext) Emit(event string, payload map[string]any) (int, error) {
	var n int
	err := c.call(protocol.MethodEmit, protocol.EmitParams{Event: event, Payload: payload}, &n)
	return n, err
}

// logHandler sends slog records to the host as log notifications.
type logHandler struct {
	conn  *protocol.Conn
	level slog.Level
	attrs []slog.Attr
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	return h.conn.Notify(protocol.MethodLog, protocol.LogParams{Level: levelName(r.Level), Message: b.String()})
}

// levelName names a slog level the way Python's logging does (the host shows
// "warning" and above on the terminal): debug, info, warning, error.
func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{conn: h.conn, level: h.level, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }
