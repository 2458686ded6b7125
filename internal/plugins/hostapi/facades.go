package hostapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
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

// injectMessage serves ctx.inject_message(content, role="user", *, session_key=None):
// into the chat session of this process (CLI mode) or, under `hermes gateway
// run`, into the existing gateway session session_key names, when
// plugins.entries.<id>.allow_gateway_injection is true. True is acceptance,
// not delivery.
func injectMessage(ctx context.Context, s *Session, fp protocol.FacadeParams) (any, error) {
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
	id := s.p.ID()
	if s.h.opts.Agent != nil {
		if accepted, ok := s.h.opts.Agent.InjectMessage(text, role); ok {
			return accepted, nil
		}
	}
	var rn GatewayRunner
	if s.h.opts.Gateway != nil {
		rn = s.h.opts.Gateway.Runner()
	}
	if rn == nil {
		s.h.log.Warn("inject_message: no CLI reference and no gateway runner in this process (a message can be injected only under `hermes chat` or `hermes gateway run`)", "plugin", id)
		return false, nil
	}
	key, _ := fp.Kwargs["session_key"].(string)
	if strings.TrimSpace(key) == "" {
		s.h.log.Warn("inject_message: gateway mode requires session_key (the key of the gateway session to inject into)", "plugin", id)
		return false, nil
	}
	if !s.gatewayInjectionAllowed() {
		s.h.log.Warn(fmt.Sprintf("inject_message: plugin %s may not inject into gateway sessions: set plugins.entries.%s.allow_gateway_injection: true in config.yaml to allow it", id, id), "plugin", id)
		return false, nil
	}
	return rn.Inject(ctx, id, key, text), nil
}

// gatewayInjectionAllowed reads plugins.entries.<id>.allow_gateway_injection
// fresh; an unreadable config denies.
func (s *Session) gatewayInjectionAllowed() bool {
	doc, err := s.h.config.Load()
	if err != nil {
		return false
	}
	v, _ := doc.GetPath([]string{"plugins", "entries", s.p.ID(), "allow_gateway_injection"})
	b, ok := config.Bool(v)
	return ok && b
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
