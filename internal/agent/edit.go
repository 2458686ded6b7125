package agent

import (
	"slices"

	"github.com/hermes-go/hermes/internal/llm"
)

// SetModel switches the model (and its provider and endpoint) later turns
// use; call it between turns.
func (a *Agent) SetModel(model, provider, baseURL string) {
	a.o.Model, a.o.Provider, a.o.BaseURL = model, provider, baseURL
}

// SetSystemPrompt replaces the base system prompt of sessions started from
// now on (a resumed session keeps the one it was stored with).
func (a *Agent) SetSystemPrompt(p string) { a.o.SystemPrompt = p }

// UserIndex is the index in the session of the turn's user message.
func (t *Turn) UserIndex() int { return t.userAt }

// History is a copy of the session's messages.
func (s *Session) History() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Messages)
}

// DropLastExchange removes the last user message and everything said after
// it (/undo). It returns the message's index and text; ok is false when the
// session has no user message yet.
func (s *Session) DropLastExchange() (index int, text string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == "user" {
			text = s.Messages[i].Content
			s.Messages = s.Messages[:i]
			return i, text, true
		}
	}
	return 0, "", false
}
