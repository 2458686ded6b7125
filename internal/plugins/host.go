package plugins

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// cliStdinKey carries the standard input a plugin CLI command may read.
type cliStdinKey struct{}

type cliStdin struct {
	in      io.Reader
	echoOff func() (restore func())
}

// WithCLIStdin gives the plugin CLI command run with ctx the reader its
// input() reads from (hermes' standard input), and echoOff, which turns that
// terminal's echo off while getpass() reads a secret (nil: not a terminal).
func WithCLIStdin(ctx context.Context, in io.Reader, echoOff func() (restore func())) context.Context {
	return context.WithValue(ctx, cliStdinKey{}, cliStdin{in: in, echoOff: echoOff})
}

// isRegistering reports whether a ctx call adds to what a plugin registered.
func isRegistering(method string) bool {
	switch method {
	case protocol.MethodRegisterTool, protocol.MethodRegisterHook, protocol.MethodRegisterCommand,
		protocol.MethodRegisterCLICommand, protocol.MethodRegisterSkill, protocol.MethodRegisterMiddleware,
		protocol.MethodRegisterOther, protocol.MethodSubscribe, protocol.MethodDispose:
		return true
	}
	return false
}

// hostHandler serves the ctx calls of one out-of-process plugin.
func (m *Manager) hostHandler(p *Plugin) protocol.Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if isRegistering(method) {
			p.recordWire(method, params)
		}
		switch method {
		case protocol.MethodLog:
			var lp protocol.LogParams
			if json.Unmarshal(params, &lp) == nil && m.opts.Sink != nil {
				m.opts.Sink(p.Key, "log:"+logLevel(lp.Level), lp.Message)
			}
			return nil, nil
		case protocol.MethodRegisterTool:
			var rp protocol.RegisterToolParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			return m.registerTool(p, rp, m.remoteTool(p, rp), m.remoteCheck(p, rp.CheckHandle))
		case protocol.MethodRegisterHook:
			var rp protocol.RegisterHookParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			m.addPending(p, func(r *registrations) {
				r.hooks = append(r.hooks, hookReg{hook: rp.Hook, callback: rp.Callback, handle: rp.Handle,
					invoke: m.remoteHook(p, rp.Hook, rp.Handle), invokeEncoded: m.remoteHookEncoded(p, rp.Hook, rp.Handle)})
			})
			return protocol.RegisterResult{Registered: true}, nil
		case protocol.MethodRegisterCommand:
			var rp protocol.RegisterCommandParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			return m.registerCommand(p, rp, m.remoteCommand(p, rp.Handle))
		case protocol.MethodRegisterCLICommand:
			var rp protocol.RegisterCLICommandParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			return m.registerCLICommand(p, rp.Name, rp.Help, rp.Description, m.remoteCLI(p, rp))
		case protocol.MethodRegisterSkill:
			var rp protocol.RegisterSkillParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			return m.registerSkill(p, rp)
		case protocol.MethodRegisterMiddleware:
			var rp protocol.RegisterMiddlewareParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			m.registerMiddleware(p, rp.Kind, rp.Handle)
			return protocol.RegisterResult{Registered: true}, nil
		case protocol.MethodRegisterOther:
			var rp protocol.RegisterOtherParams
			if err := decode(params, &rp); err != nil {
				return nil, err
			}
			if rp.Registrar == "register_system_prompt_section" {
				return m.registerPromptSection(p, rp)
			}
			return m.registerOther(p, rp), nil
		case protocol.MethodDispose:
			var dp protocol.DisposeParams
			if err := decode(params, &dp); err != nil {
				return nil, err
			}
			if err := m.dispose(p, dp.Kind, dp.Key, dp.Handle); err != nil {
				return nil, protocol.Errorf(protocol.CodeNotAvailable, "%v", err)
			}
			return map[string]bool{"ok": true}, nil
		case protocol.MethodGetConfig:
			var cp protocol.ConfigGetParams
			if err := decode(params, &cp); err != nil {
				return nil, err
			}
			return m.getConfig(p, cp.Key, cp.Default)
		case protocol.MethodSetConfig:
			var cp protocol.ConfigSetParams
			if err := decodeExact(params, &cp); err != nil {
				return nil, err
			}
			return nil, m.setConfig(ctx, p, cp.Key, cp.Value)
		case protocol.MethodStateGet:
			var sp protocol.StateGetParams
			if err := decode(params, &sp); err != nil {
				return nil, err
			}
			return m.stateGet(p, sp.Key, sp.Default)
		case protocol.MethodStateSet:
			var sp protocol.StateSetParams
			if err := decodeExact(params, &sp); err != nil {
				return nil, err
			}
			return nil, m.stateSet(ctx, p, sp.Key, sp.Value)
		case protocol.MethodHasPlugin:
			var np protocol.NameParams
			if err := decode(params, &np); err != nil {
				return nil, err
			}
			return np.Name != p.Key && m.HasPlugin(np.Name), nil
		case protocol.MethodHasCapability:
			var np protocol.NameParams
			if err := decode(params, &np); err != nil {
				return nil, err
			}
			return m.HasCapability(p, np.Name), nil
		case protocol.MethodDispatchTool:
			var dp protocol.DispatchToolParams
			if err := decode(params, &dp); err != nil {
				return nil, err
			}
			return m.DispatchTool(WithDispatchDepth(ctx, dp.Depth), dp.ToolName, dp.Args, dp.Kwargs), nil
		case protocol.MethodCLIStdin:
			in := p.cliInput()
			if in == nil {
				return nil, protocol.Errorf(protocol.CodeNotAvailable,
					"standard input is only available to a plugin CLI command while it runs (hermes <command>)")
			}
			var sp protocol.CLIStdinParams
			if len(params) > 0 && string(params) != "null" {
				if err := decode(params, &sp); err != nil {
					return nil, err
				}
			}
			line, err := in.readLine(sp.Secret)
			if err != nil {
				return nil, protocol.Errorf(protocol.CodeNotAvailable, "read standard input: %v", err)
			}
			return line, nil
		case protocol.MethodEmit:
			var ep protocol.EmitParams
			if err := decode(params, &ep); err != nil {
				return nil, err
			}
			m.waitEarlierCommitted(ctx, p)
			return m.bus.emit(p, ep.Event, ep.Payload)
		case protocol.MethodSubscribe:
			var sp protocol.SubscribeParams
			if err := decode(params, &sp); err != nil {
				return nil, err
			}
			m.addSubscription(p, sp.Event, m.remoteEvent(p, sp.Handle))
			return protocol.RegisterResult{Registered: true}, nil
		case protocol.MethodFacade:
			var fp protocol.FacadeParams
			if err := decode(params, &fp); err != nil {
				return nil, err
			}
			return m.facade(ctx, p, fp)
		case protocol.MethodMiddlewareNext:
			var np protocol.MiddlewareNextParams
			if err := decode(params, &np); err != nil {
				return nil, err
			}
			return m.middlewareNext(ctx, np.Token, np.Payload)
		}
		return nil, protocol.Errorf(protocol.CodeMethodNotFound, "hermes host has no method %q", method)
	}
}

// logLevel maps the level names other runtimes use (slog's "WARN", "warn", "fatal")
// to Python logging's, which the host's output filter speaks.
func logLevel(level string) string {
	switch l := strings.ToLower(strings.TrimSpace(level)); l {
	case "warn":
		return "warning"
	case "fatal", "crit":
		return "critical"
	case "":
		return "info"
	default:
		return l
	}
}

func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return protocol.Errorf(protocol.CodeInvalidParams, "invalid parameters: %v", err)
	}
	return nil
}

// decodeExact decodes like decode but keeps numbers as the plugin wrote them: an
// integer stays an integer (set_config(5) must write 5, not 5.0, into config.yaml)
// and large integers keep every digit.
func decodeExact(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return protocol.Errorf(protocol.CodeInvalidParams, "invalid parameters: %v", err)
	}
	switch x := v.(type) {
	case *protocol.ConfigSetParams:
		x.Value = jsonx.ExactNumbers(x.Value)
	case *protocol.StateSetParams:
		x.Value = jsonx.ExactNumbers(x.Value)
	}
	return nil
}

// ---- registration (shared by process plugins and builtins) ------------------------

func (m *Manager) registerTool(p *Plugin, rp protocol.RegisterToolParams, handler tools.Handler, check func(context.Context) bool) (any, error) {
	if strings.TrimSpace(rp.Name) == "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_tool: name must be a non-empty string")
	}
	if rp.Toolset == "" {
		rp.Toolset = p.Key
	}
	schema := rp.Schema
	if schema == nil {
		schema = map[string]any{}
	}
	// As upstream: override=True needs the permission whether or not the name is
	// taken yet (plugins register in parallel, so "taken" is only known at commit).
	if rp.Override && !m.overrideAllowed(p) {
		return nil, protocol.Errorf(protocol.CodePermission,
			"Plugin '%s' cannot override built-in tool '%s'. Set plugins.entries.%s.allow_tool_override: true in config.yaml to allow this plugin to replace built-in tools.",
			p.Candidate.Manifest.Name, rp.Name, p.Key)
	}
	// Only a tool held before this load began is refused here; a clash with another
	// plugin of the same load is settled at commit, in load order, whichever
	// register() runs first.
	if existing, ok := m.Tools.Get(rp.Name); ok && existing.Source != p.Key && !rp.Override && !m.loadingPlugin(existing.Source) {
		m.warnFor(p, "plugin %s tried to shadow tool '%s' (registered by %s) without override=True; skipped", p.Key, rp.Name, existing.Source)
		return protocol.RegisterResult{Registered: false, Warning: "tool name already taken"}, nil
	}
	t := &tools.Tool{
		Name: rp.Name, Toolset: rp.Toolset, Description: rp.Description, Emoji: rp.Emoji, Schema: schema,
		Source: p.Key, RequiresEnv: rp.RequiresEnv, IsAsync: rp.IsAsync, Check: check, Handler: handler,
	}
	m.addPending(p, func(r *registrations) { r.tools = append(r.tools, toolReg{tool: t, override: rp.Override}) })
	return protocol.RegisterResult{Registered: true}, nil
}

// overrideAllowed: bundled plugins are trusted for tools.override; others need the
// capability granted (or the legacy allow_tool_override key). Unreadable config denies.
func (m *Manager) overrideAllowed(p *Plugin) bool {
	if p.Candidate.Source == "bundled" {
		return true
	}
	return m.capabilityGranted(p.Key, "tools.override")
}

// HasCapability answers ctx.has_capability, reading config fresh each time.
func (m *Manager) HasCapability(p *Plugin, id string) bool {
	if id == "tools.override" && p.Candidate.Source == "bundled" {
		return true
	}
	return m.capabilityGranted(p.Key, id)
}

func (m *Manager) capabilityGranted(pluginID, id string) bool {
	doc, err := m.store.Load()
	if err != nil {
		m.log.Info("capability_check", "plugin", pluginID, "capability", id, "decision", "deny", "evidence", "config unreadable")
		return false
	}
	ok, evidence := capability.Granted(doc.Map(), pluginID, id)
	decision := "deny"
	if ok {
		decision = "allow"
	}
	m.log.Info("capability_check", "plugin", pluginID, "capability", id, "decision", decision, "evidence", evidence)
	return ok
}

func (m *Manager) addHook(p *Plugin, hook, callback string, invoke func(context.Context, map[string]any) (any, error)) {
	m.addPending(p, func(r *registrations) {
		r.hooks = append(r.hooks, hookReg{hook: hook, callback: callback, invoke: invoke})
	})
}

var commandModes = map[string]bool{"options": true, "text": true, "mixed": true}

func (m *Manager) registerCommand(p *Plugin, rp protocol.RegisterCommandParams, run func(context.Context, string) (string, bool, error)) (any, error) {
	name := strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(strings.ToLower(rp.Name)), "/"), " ", "-")
	if name == "" {
		m.warnFor(p, "plugin %s registered a command with an empty name; skipped", p.Key)
		return protocol.RegisterResult{Registered: false}, nil
	}
	if builtinSlashCommands[name] {
		m.warnFor(p, "plugin %s: command '/%s' conflicts with a built-in command. Skipping.", p.Key, name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with a built-in command"}, nil
	}
	mode := rp.ArgumentMode
	if !commandModes[mode] {
		mode = ""
		if rp.ArgsHint != "" {
			mode = "text"
		}
	}
	desc := rp.Description
	if desc == "" {
		desc = "Plugin command"
	}
	c := &Command{Name: name, Description: desc, ArgsHint: rp.ArgsHint, ArgumentMode: mode, Plugin: p.Key, IsAsync: rp.IsAsync, Run: run}
	m.addPending(p, func(r *registrations) { r.commands = append(r.commands, c) })
	return protocol.RegisterResult{Registered: true}, nil
}

var cliNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

func (m *Manager) registerCLICommand(p *Plugin, name, help, description string, run func(context.Context, []string, io.Writer, io.Writer) (int, error)) (any, error) {
	if len(name) > 64 || !cliNameRE.MatchString(name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_cli_command: name %q must be letters, digits, '-' or '_'", name)
	}
	if builtinCLIVerbs[name] {
		m.warnFor(p, "plugin %s: CLI command '%s' conflicts with a built-in hermes command; skipped", p.Key, name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with a built-in command"}, nil
	}
	c := &CLICommand{Name: name, Help: help, Description: description, Plugin: p.Key, Run: run}
	m.addPending(p, func(r *registrations) { r.cliCommands = append(r.cliCommands, c) })
	return protocol.RegisterResult{Registered: true}, nil
}

var skillNameRE = lazyre.New(`^[a-zA-Z0-9_-]+$`)

func (m *Manager) registerSkill(p *Plugin, rp protocol.RegisterSkillParams) (any, error) {
	if strings.Contains(rp.Name, ":") {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_skill: name %q must not contain ':' (skills are addressed as '<namespace>:<name>')", rp.Name)
	}
	if !skillNameRE.MatchString(rp.Name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_skill: name %q must match [a-zA-Z0-9_-]+", rp.Name)
	}
	if st, err := os.Stat(rp.Path); err != nil || st.IsDir() {
		return nil, protocol.Errorf(protocol.CodeNotFound, "register_skill: skill file not found: %s", rp.Path)
	}
	ns := p.Candidate.Manifest.Name
	s := SkillInfo{Name: ns + ":" + rp.Name, Path: rp.Path, Description: rp.Description}
	m.addPending(p, func(r *registrations) { r.skills = append(r.skills, s) })
	return protocol.RegisterResult{Registered: true}, nil
}

func (m *Manager) registerOther(p *Plugin, rp protocol.RegisterOtherParams) any {
	note := "accepted and recorded; not available in this host yet"
	name := rp.Name
	if rp.Registrar == "register_redaction_patterns" {
		note = "recorded; redaction is not available in this host yet"
		if pats, ok := rp.Details["patterns"].([]any); ok && name == "" {
			name = fmt.Sprintf("%d pattern(s)", len(pats))
		}
	}
	m.addPending(p, func(r *registrations) {
		r.other = append(r.other, OtherInfo{Registrar: rp.Registrar, Name: name, Note: note})
	})
	m.log.Info("plugin registration recorded but not served yet", "plugin", p.Key, "registrar", rp.Registrar, "name", name)
	if rp.Registrar == "register_redaction_patterns" {
		return map[string]int{"accepted": 0}
	}
	return protocol.RegisterResult{Registered: true, Warning: note}
}

// ---- calling into a process plugin ------------------------------------------------

// handlerData extracts the plugin exception details from a protocol error.
func handlerData(e *protocol.Error) protocol.HandlerErrorData {
	var d protocol.HandlerErrorData
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &d)
	}
	return d
}

// pluginError is a plugin exception as the hook dispatcher sees it.
type pluginError struct {
	typ, msg string
}

func (e *pluginError) Error() string         { return e.msg }
func (e *pluginError) ExceptionType() string { return e.typ }

var _ hooks.ExceptionError = (*pluginError)(nil)

// asPluginError maps call failures to an exception class and message.
func asPluginError(err error) *pluginError {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		d := handlerData(perr)
		if d.Type != "" {
			return &pluginError{typ: d.Type, msg: perr.Message}
		}
		return &pluginError{typ: "HostError", msg: perr.Message}
	}
	var ee *runtime.ExitError
	if errors.As(err, &ee) {
		return &pluginError{typ: "PluginExited", msg: ee.Message}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &pluginError{typ: "TimeoutError", msg: "timed out"}
	}
	return &pluginError{typ: "Error", msg: err.Error()}
}

func (m *Manager) remoteTool(p *Plugin, rp protocol.RegisterToolParams) tools.Handler {
	name, handle := rp.Name, rp.Handle
	return func(ctx context.Context, args, kwargs map[string]any) (string, error) {
		timeout := m.settings.ToolCallTimeout
		cctx := ctx
		if timeout > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		var early *stallSnapshot
		if timeout > 0 && m.stallDebug() {
			early = m.snapshotBefore(p, timeout)
		}
		raw, err := p.call(cctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handle, Args: args, Kwargs: kwargs, DispatchDepth: dispatchDepth(ctx)})
		early.stop()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				if early != nil {
					m.reportStall(p, "tool "+name, early.text())
				}
				m.restartAsync(p, fmt.Sprintf("tool %s did not answer within %s", name, timeout))
				return "", &tools.ToolError{Type: "timeout", Message: fmt.Sprintf(
					"Tool %s timed out after %s: plugin %s did not answer, so its process was stopped and is being restarted (raise plugins.tool_call_timeout if the tool needs longer)",
					name, timeout, p.Key)}
			}
			if ctx.Err() != nil {
				return "", &tools.ToolError{Type: "cancelled", Message: "Tool " + name + " was interrupted"}
			}
			pe := asPluginError(err)
			return "", &tools.ToolError{Type: pe.typ, Message: fmt.Sprintf("Tool execution failed: %s: %s", pe.typ, pe.msg)}
		}
		return normalizeToolResult(name, raw)
	}
}

// normalizeToolResult applies the handler contract: a string, or the multimodal
// envelope; anything else is reported as a contract error, as upstream does.
//
// JSON null must be caught before decoding into a string: encoding/json leaves the
// string empty without an error, which made a handler returning None a success.
func normalizeToolResult(name string, raw json.RawMessage) (string, error) {
	kind := jsonKind(raw)
	if kind == "str" {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s, nil
		}
	}
	if kind == "dict" {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err == nil {
			if mm, _ := obj["_multimodal"].(bool); mm {
				if _, ok := obj["content"].([]any); ok {
					return string(raw), nil
				}
			}
			// The Python bridge names the type of a result JSON cannot show (bytes, object()).
			if t, ok := obj["_hermes_unsupported_result"].(string); ok && len(obj) == 1 && t != "" {
				kind = t
			}
		}
	}
	return "", &tools.ToolError{Type: "tool_result_contract",
		Message: fmt.Sprintf("Tool handler returned unsupported result type: %s (tool %s must return a JSON string)", kind, name)}
}

func jsonKind(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "" || t == "null":
		return "NoneType"
	case t[0] == '"':
		return "str"
	case t[0] == '{':
		return "dict"
	case t[0] == '[':
		return "list"
	case t == "true" || t == "false":
		return "bool"
	case strings.ContainsAny(t, ".eE"):
		return "float"
	default:
		return "int"
	}
}

func (m *Manager) remoteCheck(p *Plugin, handle string) func(context.Context) bool {
	if handle == "" {
		return nil
	}
	return func(ctx context.Context) bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		raw, err := p.call(cctx, protocol.MethodCheck, protocol.CheckCallParams{Handle: handle})
		if err != nil {
			m.log.Warn("check_fn failed; tool unavailable", "plugin", p.Key, "error", err)
			pe := asPluginError(err)
			tools.CheckFailed(ctx, fmt.Errorf("%s: %s", pe.typ, pe.msg))
			return false
		}
		var ok bool
		_ = json.Unmarshal(raw, &ok)
		return ok
	}
}

func (m *Manager) remoteHook(p *Plugin, hook, handle string) func(context.Context, map[string]any) (any, error) {
	return func(ctx context.Context, payload map[string]any) (any, error) {
		early := m.snapshotBeforeDeadline(ctx, p)
		raw, err := p.call(ctx, protocol.MethodHookCall, protocol.HookCallParams{Handle: handle, Hook: hook, Kwargs: payload})
		return m.hookResult(p, hook, early, raw, err)
	}
}

// remoteHookEncoded forwards a payload the dispatcher encoded once for every plugin.
func (m *Manager) remoteHookEncoded(p *Plugin, hook, handle string) func(context.Context, []byte) (any, error) {
	return func(ctx context.Context, payload []byte) (any, error) {
		early := m.snapshotBeforeDeadline(ctx, p)
		raw, err := p.call(ctx, protocol.MethodHookCall, protocol.EncodeHookCall(handle, hook, payload))
		return m.hookResult(p, hook, early, raw, err)
	}
}

// hookResult decodes a hook call's answer; a timed-out callback's plugin is restarted.
func (m *Manager) hookResult(p *Plugin, hook string, early *stallSnapshot, raw json.RawMessage, err error) (any, error) {
	early.stop()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if early != nil {
				m.reportStall(p, hook+" hook", early.text())
			}
			// The callback is still running in the plugin; stop it for real.
			m.restartAsync(p, fmt.Sprintf("%s hook timed out", hook))
		}
		return nil, asPluginError(err)
	}
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (m *Manager) remoteCommand(p *Plugin, handle string) func(context.Context, string) (string, bool, error) {
	return func(ctx context.Context, raw string) (string, bool, error) {
		res, err := p.call(ctx, protocol.MethodCommand, protocol.CommandCallParams{Handle: handle, RawArgs: raw})
		if err != nil {
			pe := asPluginError(err)
			return "", false, fmt.Errorf("%s: %s", pe.typ, pe.msg)
		}
		var v any
		_ = json.Unmarshal(res, &v)
		switch x := v.(type) {
		case nil:
			return "", false, nil
		case string:
			return x, true, nil
		default:
			return string(res), true, nil
		}
	}
}

func (m *Manager) remoteCLI(p *Plugin, rp protocol.RegisterCLICommandParams) func(context.Context, []string, io.Writer, io.Writer) (int, error) {
	return func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
		proc := p.process()
		if proc == nil {
			return 1, fmt.Errorf("plugin %s is not running", p.Key)
		}
		// The command's output is the plugin's stdout/stderr, shown untagged; its
		// input() reads hermes' standard input through ctx.cli_stdin.
		proc.SetPassthrough(stdout, stderr)
		if in, ok := ctx.Value(cliStdinKey{}).(cliStdin); ok && in.in != nil {
			p.setCLIInput(&cliInput{r: bufio.NewReader(in.in), echoOff: in.echoOff})
			defer p.setCLIInput(nil)
		}
		defer m.watchSlowCall(p, "CLI command "+rp.Name, time.Minute)()
		var res protocol.CLIRunResult
		err := proc.Call(ctx, protocol.MethodCLIRun, protocol.CLIRunParams{
			Name: rp.Name, Prog: "hermes " + rp.Name, Argv: argv, SetupHandle: rp.SetupHandle,
			HandlerHandle: rp.HandlerHandle, Help: rp.Help, Description: rp.Description,
		}, &res)
		if err != nil {
			pe := asPluginError(err)
			return 1, fmt.Errorf("%s: %s", pe.typ, pe.msg)
		}
		return res.ExitCode, nil
	}
}

func (m *Manager) remoteEvent(p *Plugin, handle string) func(context.Context, string, map[string]any) error {
	return func(ctx context.Context, event string, payload map[string]any) error {
		_, err := p.call(ctx, protocol.MethodEvent, protocol.EventParams{Handle: handle, Event: event, Payload: payload})
		return err
	}
}

// ---- ctx facades -------------------------------------------------------------------

// pluginKeyPath maps a plugin-relative config key to its path under
// plugins.entries.<id>.settings; a bad key raises ValueError with upstream's text.
func pluginKeyPath(pluginID, key string) ([]string, error) {
	path, err := config.PluginKeySegments(pluginID, key)
	if errors.Is(err, config.ErrInvalidPluginKey) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "%s", config.InvalidPluginKeyMessage)
	}
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "%v", err)
	}
	return path, nil
}

func (m *Manager) getConfig(p *Plugin, key string, def any) (any, error) {
	path, err := pluginKeyPath(p.Key, key)
	if err != nil {
		return nil, err
	}
	doc, err := m.store.Load()
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "%v", err)
	}
	if v, ok := doc.GetPath(path); ok {
		return v, nil
	}
	// Legacy fallback: plugins.entries.<id>.config.<key>.
	legacy := append([]string{}, path...)
	for i, s := range legacy {
		if s == "settings" && i == 3 {
			legacy[i] = "config"
			break
		}
	}
	if v, ok := doc.GetPath(legacy); ok {
		return v, nil
	}
	return def, nil
}

func (m *Manager) setConfig(ctx context.Context, p *Plugin, key string, value any) error {
	path, err := pluginKeyPath(p.Key, key)
	if err != nil {
		return err
	}
	err = m.store.Update(ctx, func(d *config.Doc) error { return d.SetPath(path, value) })
	if err != nil {
		return protocol.Errorf(protocol.CodeRuntimeError, "set_config: %v", err)
	}
	return nil
}

type dispatchDepthKey struct{}

// WithDispatchDepth marks ctx as running under depth nested ctx.dispatch_tool
// calls (what a plugin reported for the tool call dispatching).
func WithDispatchDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, dispatchDepthKey{}, max(depth, 0))
}

func dispatchDepth(ctx context.Context) int {
	d, _ := ctx.Value(dispatchDepthKey{}).(int)
	return d
}

// DispatchTool runs a tool through the whole pipeline (hooks, approval, validation)
// on behalf of a plugin, returning the result string the model would see.
func (m *Manager) DispatchTool(ctx context.Context, name string, args, kwargs map[string]any) string {
	depth := dispatchDepth(ctx) + 1
	if depth > protocol.MaxDispatchDepth {
		return tools.ErrorResult(fmt.Sprintf("ctx.dispatch_tool(%q) refused: tool calls are nested %d deep through dispatch_tool (the most is %d); is a tool dispatching itself?",
			name, depth, protocol.MaxDispatchDepth), nil)
	}
	ctx = context.WithValue(ctx, dispatchDepthKey{}, depth)
	c := tools.Call{Name: name, Args: args}
	if v, ok := kwargs["task_id"].(string); ok {
		c.TaskID = v
	}
	if v, ok := kwargs["session_id"].(string); ok {
		c.SessionID = v
	}
	if v, ok := kwargs["tool_call_id"].(string); ok {
		c.ToolCallID = v
	}
	return m.Runner.Run(ctx, c).Result
}

func (m *Manager) facade(ctx context.Context, p *Plugin, fp protocol.FacadeParams) (any, error) {
	if v, ok, err := m.agentFacade(ctx, p, fp); ok {
		return v, err
	}
	switch fp.Name {
	case "call_mcp":
		return map[string]any{"ok": false, "error": "ctx.call_mcp is not available in this host yet (MCP client support has not landed); no MCP server was called"}, nil
	case "emit_status":
		return map[string]any{"accepted": false, "error": "ctx.emit_status is not available in this host yet (no gateway is running)"}, nil
	}
	if strings.HasPrefix(fp.Name, "platform_actions.") {
		// As upstream, every call re-checks the capability first; an ungranted call
		// never learns anything about the gateway.
		capID := "gateway.platform_actions"
		if fp.Name == "platform_actions.send_status" {
			capID = "gateway.plugin_status"
		}
		verb := strings.TrimPrefix(fp.Name, "platform_actions.")
		if !m.HasCapability(p, capID) {
			m.log.Info("platform_action", "plugin", p.Key, "verb", verb, "platform", fp.Kwargs["platform"], "outcome", "capability_not_granted")
			return map[string]any{"ok": false, "error": "capability_not_granted",
				"detail": fmt.Sprintf("plugin %s does not hold the %s capability: grant it with `hermes plugins enable %s` (interactive consent)", p.Key, capID, p.Key)}, nil
		}
		m.log.Info("platform_action", "plugin", p.Key, "verb", verb, "platform", fp.Kwargs["platform"], "outcome", "gateway_unavailable")
		return map[string]any{"ok": false, "error": "gateway_unavailable",
			"detail": "ctx." + fp.Name + " is not available in this host yet (no gateway is running)"}, nil
	}
	m.log.Warn("plugin used a facade this host does not serve yet", "plugin", p.Key, "facade", fp.Name)
	return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.%s is not available in this host yet", fp.Name)
}
