package shellhooks

import (
	"context"
	"log/slog"

	"github.com/hermes-go/hermes/internal/hooks"
)

// PluginID is the owner shell hooks are registered under on the dispatcher:
// they run one after another (as upstream), after the plugins' callbacks.
const PluginID = "shell-hooks"

// Hook is one consented shell hook, ready to run.
type Hook struct {
	Spec   Spec
	Runner *Runner
	// Cwd and Profile go into the stdin payload.
	Cwd, Profile string
	Logger       *slog.Logger
}

// Fire runs the hook for one firing of its event and returns its contribution
// (nil: none). Failures are logged, never returned: the dispatcher would turn
// an error on pre_tool_call into a block, and a shell hook fails open unless
// it says fail_closed (then the block is in the result).
func (h *Hook) Fire(ctx context.Context, payload map[string]any) (map[string]any, Result) {
	if toolEvents[h.Spec.Event] {
		tool, _ := payload["tool_name"].(string)
		if !h.Spec.MatchesTool(tool) {
			return nil, Result{}
		}
	}
	stdin, err := StdinPayload(h.Spec.Event, payload, h.Cwd, h.Profile)
	if err != nil {
		r := Result{ExitCode: -1, Err: err}
		o := Evaluate(h.Spec, r)
		h.warn(o.Warning)
		return o.Result, r
	}
	r := h.Runner.Run(ctx, h.Spec, stdin)
	o := Evaluate(h.Spec, r)
	h.warn(o.Warning)
	return o.Result, r
}

func (h *Hook) warn(msg string) {
	if msg == "" {
		return
	}
	log := h.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn(msg, "hook", h.Spec.Event, "command", h.Spec.Command)
}

// Callback is the hook as a dispatcher callback.
func (h *Hook) Callback() hooks.Callback {
	return hooks.Callback{
		PluginID: PluginID,
		Name:     "shell_hook[" + h.Spec.Event + ":" + h.Spec.Command + "]",
		Invoke: func(ctx context.Context, payload map[string]any) (any, error) {
			res, _ := h.Fire(ctx, payload)
			if res == nil {
				return nil, nil // a typed nil map would count as a result
			}
			return res, nil
		},
	}
}
