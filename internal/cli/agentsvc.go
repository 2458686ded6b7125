package cli

import (
	"context"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/plugins/hostapi"
)

// pluginLLMFunc serves ctx.llm.complete / complete_structured for one plugin
// (method "complete" or "complete_structured").
type pluginLLMFunc func(ctx context.Context, pluginID, method string, kwargs map[string]any) (map[string]any, error)

// agentServices are the agent's facades as the plugins of one command reach
// them: ctx.llm from the first command on (the chat replaces the lazy client
// with its own), ctx.inject_message only while a chat session runs.
type agentServices struct {
	inject atomic.Pointer[func(text, role string) bool]
	llm    atomic.Pointer[pluginLLMFunc]
}

var _ hostapi.AgentServices = (*agentServices)(nil)

func (s *agentServices) setInjector(f func(text, role string) bool) {
	if f == nil {
		s.inject.Store(nil)
		return
	}
	s.inject.Store(&f)
}

func (s *agentServices) setLLM(f pluginLLMFunc) { s.llm.Store(&f) }

func (s *agentServices) InjectMessage(text, role string) (accepted, ok bool) {
	f := s.inject.Load()
	if f == nil {
		return false, false
	}
	return (*f)(text, role), true
}

func (s *agentServices) CompleteLLM(ctx context.Context, pluginID, method string, kwargs map[string]any) (map[string]any, bool, error) {
	f := s.llm.Load()
	if f == nil {
		return nil, false, nil
	}
	res, err := (*f)(ctx, pluginID, method, kwargs)
	return res, true, err
}
