package hostapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// GatewayServices reach the gateway runner this process serves, if any: the
// app binds it while `hermes gateway run` serves and unbinds it after.
type GatewayServices interface {
	// Runner is the active runner; nil when none is.
	Runner() GatewayRunner
}

// GatewayRunner is what plugins reach of a running gateway.
type GatewayRunner interface {
	// Adapter returns the adapter serving a platform (lower case).
	Adapter(name string) (platform.Adapter, bool)
	// Inject hands text to the existing session of key as a conversational
	// message (never a command, never an approval's answer); false when it
	// was not accepted (the reason is in the gateway log).
	Inject(ctx context.Context, pluginID, key, text string) bool
	// Logger is the gateway log, where platform actions are audited too.
	Logger() *slog.Logger
}

// Upstream's ctx.platform_actions v1 error codes.
const (
	paCapabilityNotGranted = "capability_not_granted"
	paInvalidArgument      = "invalid_argument"
	paGatewayUnavailable   = "gateway_unavailable"
	paUnknownPlatform      = "unknown_platform"
	paAdapterNotRegistered = "adapter_not_registered"
	paAdapterDisconnected  = "adapter_disconnected"
	paUnsupported          = "unsupported_platform_action"
	paActionFailed         = "action_failed"
)

// paDetailCap is upstream's cut of an exception's text (str(exc)[:512]).
const paDetailCap = 512

// paTimeout bounds one action: the platform's API answers in seconds, and a
// plugin awaiting it must not wait for ever on a stalled connection.
const paTimeout = 30 * time.Second

// paVerbs are the v1 verbs, their required arguments in signature order,
// and how each reaches an adapter (nil ok: the adapter does not do it).
var paVerbs = map[string]struct {
	args []string
	act  func(ctx context.Context, a platform.Adapter, v map[string]string) (done bool, err error)
}{
	"add_reaction": {[]string{"platform", "chat_id", "message_id", "emoji"},
		func(ctx context.Context, a platform.Adapter, v map[string]string) (bool, error) {
			r, ok := a.(platform.ReactionAdder)
			if !ok {
				return false, nil
			}
			return true, r.AddReaction(ctx, v["chat_id"], v["message_id"], v["emoji"])
		}},
	"set_thread_title": {[]string{"platform", "chat_id", "thread_id", "title"},
		func(ctx context.Context, a platform.Adapter, v map[string]string) (bool, error) {
			r, ok := a.(platform.ThreadRenamer)
			if !ok {
				return false, nil
			}
			return true, r.SetThreadTitle(ctx, v["chat_id"], v["thread_id"], v["title"])
		}},
}

// platformAction serves ctx.platform_actions.<verb> through upstream's gate
// chain, in its order: capability (read fresh at every call), arguments, a
// running gateway, a known platform, its adapter, connected, the verb, the
// call. It never raises: every outcome is an envelope, and audited.
func platformAction(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	verb := strings.TrimPrefix(fp.Name, "platform_actions.")
	var rn GatewayRunner
	if s.h.opts.Gateway != nil {
		rn = s.h.opts.Gateway.Runner()
	}
	pl, _ := fp.Kwargs["platform"].(string)
	pl = strings.ToLower(strings.TrimSpace(pl))
	res := s.platformAction(ctx, rn, verb, pl, fp.Kwargs)
	line := fmt.Sprintf("platform_action plugin=%s verb=%s platform=%s ok=%s", s.p.ID(), verb, pl, pyBool(res.ok))
	if !res.ok {
		line += " error=" + res.code
	}
	s.h.log.Info(line)
	if rn != nil {
		rn.Logger().Info(line)
	}
	if res.ok {
		return map[string]any{"ok": true, "action": verb}, nil
	}
	out := map[string]any{"ok": false, "error": res.code}
	if res.detail != "" {
		out["detail"] = res.detail
	}
	return out, nil
}

type paResult struct {
	ok           bool
	code, detail string
}

func paFail(code, format string, args ...any) paResult {
	return paResult{code: code, detail: fmt.Sprintf(format, args...)}
}

func (s *Session) platformAction(ctx context.Context, rn GatewayRunner, verb, pl string, kw map[string]any) paResult {
	id := s.p.ID()
	capID, legacy := "gateway.platform_actions", "allow_platform_actions"
	if verb == "send_status" {
		capID, legacy = "gateway.plugin_status", "allow_plugin_status"
	}
	if !s.HasCapability(capID) {
		return paFail(paCapabilityNotGranted, "plugin '%s' lacks the '%s' capability (grant via consent flow or plugins.entries.%s.%s)", id, capID, id, legacy)
	}
	spec, known := paVerbs[verb]
	if !known {
		return paFail(paUnsupported, "%s is not implemented in this host", verb)
	}
	vals := make(map[string]string, len(spec.args))
	for _, arg := range spec.args {
		v, ok := kw[arg].(string)
		if !ok || v == "" {
			return paFail(paInvalidArgument, "%s must be a non-empty string", arg)
		}
		vals[arg] = v
	}
	if rn == nil {
		return paFail(paGatewayUnavailable, "no gateway runner is active in this process")
	}
	if !platform.Known(pl) {
		return paFail(paUnknownPlatform, "unknown platform %s", pyRepr(pl))
	}
	a, ok := rn.Adapter(pl)
	if !ok {
		return paFail(paAdapterNotRegistered, "no %s adapter is registered", pl)
	}
	if !a.Connected() {
		return paFail(paAdapterDisconnected, "the %s adapter is not connected", pl)
	}
	actx, cancel := context.WithTimeout(ctx, paTimeout)
	defer cancel()
	done, err := spec.act(actx, a, vals)
	if !done {
		return paFail(paUnsupported, "%s is not implemented for %s", verb, pl)
	}
	var bad *platform.InvalidArgumentError
	switch {
	case errors.As(err, &bad):
		return paFail(paInvalidArgument, "%s", bad.Reason)
	case err != nil:
		return paFail(paActionFailed, "%s", cutRunes(err.Error(), paDetailCap))
	}
	return paResult{ok: true}
}

// cutRunes is Python's s[:n]: n characters, not bytes.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// pyBool spells a boolean as upstream's log lines do.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
