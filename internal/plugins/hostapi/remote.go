package hostapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// The handles of an out-of-process plugin's registrations: each calls back into
// its process by the handle the plugin gave.

func (s *Session) remoteTool(rp protocol.RegisterToolParams) tools.Handler {
	name, handle := rp.Name, rp.Handle
	return func(ctx context.Context, args, kwargs map[string]any) (string, error) {
		timeout := s.h.opts.ToolCallTimeout()
		cctx := ctx
		if timeout > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		stalls := s.h.opts.Stalls
		early := stalls.SnapshotBefore(s.p.Process, s.p.Python(), timeout)
		raw, err := s.p.Call(cctx, protocol.MethodToolCall, protocol.ToolCallParams{Handle: handle, Args: args, Kwargs: kwargs, DispatchDepth: dispatchDepth(ctx)})
		early.Stop()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				if early != nil {
					stalls.Report(s.p.ID(), s.p.Process(), s.p.Python(), "tool "+name, early)
				}
				s.p.Restart(fmt.Sprintf("tool %s did not answer within %s", name, timeout))
				return "", &tools.ToolError{Type: "timeout", Message: fmt.Sprintf(
					"Tool %s timed out after %s: plugin %s did not answer, so its process was stopped and is being restarted (raise plugins.tool_call_timeout if the tool needs longer)",
					name, timeout, s.p.ID())}
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

func (s *Session) remoteCheck(handle string) func(context.Context) bool {
	if handle == "" {
		return nil
	}
	return func(ctx context.Context) bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		raw, err := s.p.Call(cctx, protocol.MethodCheck, protocol.CheckCallParams{Handle: handle})
		if err != nil {
			s.h.log.Warn("check_fn failed; tool unavailable", "plugin", s.p.ID(), "error", err)
			pe := asPluginError(err)
			tools.CheckFailed(ctx, fmt.Errorf("%s: %s", pe.typ, pe.msg))
			return false
		}
		var ok bool
		_ = json.Unmarshal(raw, &ok)
		return ok
	}
}

func (s *Session) remoteHook(hook, handle string) func(context.Context, map[string]any) (any, error) {
	return func(ctx context.Context, payload map[string]any) (any, error) {
		early := s.h.opts.Stalls.SnapshotBeforeDeadline(ctx, s.p.Process, s.p.Python())
		raw, err := s.p.Call(ctx, protocol.MethodHookCall, protocol.HookCallParams{Handle: handle, Hook: hook, Kwargs: payload})
		return s.hookResult(hook, early, raw, err)
	}
}

// remoteHookEncoded forwards a payload the dispatcher encoded once for every plugin.
func (s *Session) remoteHookEncoded(hook, handle string) func(context.Context, []byte) (any, error) {
	return func(ctx context.Context, payload []byte) (any, error) {
		early := s.h.opts.Stalls.SnapshotBeforeDeadline(ctx, s.p.Process, s.p.Python())
		raw, err := s.p.Call(ctx, protocol.MethodHookCall, protocol.EncodeHookCall(handle, hook, payload))
		return s.hookResult(hook, early, raw, err)
	}
}

// hookResult decodes a hook call's answer; a timed-out callback's plugin is restarted.
func (s *Session) hookResult(hook string, early *runtime.StallSnapshot, raw json.RawMessage, err error) (any, error) {
	early.Stop()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if early != nil {
				s.h.opts.Stalls.Report(s.p.ID(), s.p.Process(), s.p.Python(), hook+" hook", early)
			}
			// The callback is still running in the plugin; stop it for real.
			s.p.Restart(fmt.Sprintf("%s hook timed out", hook))
		}
		return nil, asPluginError(err)
	}
	return decodeResult(raw)
}

// decodeResult decodes a callback's answer; an empty one is None.
func decodeResult(raw json.RawMessage) (any, error) {
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (s *Session) remoteCommand(handle string) func(context.Context, string) (string, bool, error) {
	return func(ctx context.Context, raw string) (string, bool, error) {
		res, err := s.p.Call(ctx, protocol.MethodCommand, protocol.CommandCallParams{Handle: handle, RawArgs: raw})
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

func (s *Session) remoteCLI(rp protocol.RegisterCLICommandParams) func(context.Context, []string, io.Writer, io.Writer) (int, error) {
	return func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error) {
		proc := s.p.Process()
		if proc == nil {
			return 1, fmt.Errorf("plugin %s is not running", s.p.ID())
		}
		// The command's output is the plugin's stdout/stderr, shown untagged; its
		// input() reads hermes' standard input through ctx.cli_stdin.
		proc.SetPassthrough(stdout, stderr)
		if in, ok := ctx.Value(cliStdinKey{}).(cliStdin); ok && in.in != nil {
			s.cliIn.set(&cliInput{r: bufio.NewReader(in.in), echoOff: in.echoOff})
			defer s.cliIn.set(nil)
		}
		defer s.h.opts.Stalls.WatchSlowCall(s.p.ID(), s.p.Process, s.p.Python(), "CLI command "+rp.Name, time.Minute)()
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

func (s *Session) remoteEvent(handle string) func(context.Context, string, map[string]any) error {
	return func(ctx context.Context, event string, payload map[string]any) error {
		_, err := s.p.Call(ctx, protocol.MethodEvent, protocol.EventParams{Handle: handle, Event: event, Payload: payload})
		return err
	}
}

func (s *Session) remoteMiddleware(handle string) func(context.Context, map[string]any, func(context.Context, any) (any, error)) (any, error) {
	return func(ctx context.Context, kwargs map[string]any, next func(context.Context, any) (any, error)) (any, error) {
		params := map[string]any{"handle": handle, "kwargs": kwargs}
		if next != nil {
			token := s.h.nexts.add(next)
			defer s.h.nexts.drop(token)
			params["next_token"] = token
		}
		raw, err := s.p.Call(ctx, protocol.MethodMiddlewareCall, params)
		if err != nil {
			return nil, asPluginError(err)
		}
		return decodeResult(raw)
	}
}

func (s *Session) remotePromptSection(handle string) func(context.Context, map[string]any) (string, error) {
	return func(ctx context.Context, info map[string]any) (string, error) {
		raw, err := s.p.Call(ctx, protocol.MethodPromptSection, map[string]any{"handle": handle, "info": info})
		if err != nil {
			return "", asPluginError(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", err
		}
		str, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("returned %T, not a string", v)
		}
		return str, nil
	}
}
