package hostapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.<facade>(...) calls that are not protocol methods of their own come as
// MethodFacade with the facade's name; each is a row here.
var facades = map[string]func(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error){
	"inject_message":          injectMessage,
	"llm.complete":            completeLLM,
	"llm.complete_structured": completeLLM,
	"call_mcp":                callMCP,
	"emit_status":             emitStatus,
}

func facade(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	if f, ok := facades[fp.Name]; ok {
		return f(ctx, s, fp)
	}
	if strings.HasPrefix(fp.Name, "platform_actions.") {
		return platformAction(ctx, s, fp)
	}
	s.h.log.Warn("plugin used a facade this host does not serve yet", "plugin", s.p.ID(), "facade", fp.Name)
	return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.%s is not available in this host yet", fp.Name)
}

// injectMessage serves ctx.inject_message(content, role="user").
func injectMessage(_ context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	content := ""
	if len(fp.Args) > 0 {
		content, _ = fp.Args[0].(string)
	}
	role, _ := fp.Kwargs["role"].(string)
	if role == "" {
		role = "user"
	}
	text := content
	if role != "user" {
		text = fmt.Sprintf("[%s] %s", role, content)
	}
	if s.h.opts.Agent != nil {
		if accepted, ok := s.h.opts.Agent.InjectMessage(text, role); ok {
			return accepted, nil
		}
	}
	s.h.log.Warn("inject_message: no CLI reference (not available in gateway mode)", "plugin", s.p.ID())
	return false, nil
}

// completeLLM serves ctx.llm.complete and ctx.llm.complete_structured.
func completeLLM(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	if s.h.opts.Agent != nil {
		res, ok, err := s.h.opts.Agent.CompleteLLM(ctx, s.p.ID(), strings.TrimPrefix(fp.Name, "llm."), fp.Kwargs)
		if ok {
			return res, err
		}
	}
	return nil, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm is not available here: no model is configured for this command")
}

func emitStatus(context.Context, *Session, protocol.FacadeParams) (any, error) {
	return map[string]any{"accepted": false, "error": "ctx.emit_status is not available in this host yet (no gateway is running)"}, nil
}

// platformAction serves ctx.platform_actions.*. As upstream, every call
// re-checks the capability first; an ungranted call never learns anything
// about the gateway.
func platformAction(_ context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
	key := s.p.ID()
	capID := "gateway.platform_actions"
	if fp.Name == "platform_actions.send_status" {
		capID = "gateway.plugin_status"
	}
	verb := strings.TrimPrefix(fp.Name, "platform_actions.")
	if !s.HasCapability(capID) {
		s.h.log.Info("platform_action", "plugin", key, "verb", verb, "platform", fp.Kwargs["platform"], "outcome", "capability_not_granted")
		return map[string]any{"ok": false, "error": "capability_not_granted",
			"detail": fmt.Sprintf("plugin %s does not hold the %s capability: grant it with `hermes plugins enable %s` (interactive consent)", key, capID, key)}, nil
	}
	s.h.log.Info("platform_action", "plugin", key, "verb", verb, "platform", fp.Kwargs["platform"], "outcome", "gateway_unavailable")
	return map[string]any{"ok": false, "error": "gateway_unavailable",
		"detail": "ctx." + fp.Name + " is not available in this host yet (no gateway is running)"}, nil
}
