package app

import (
	"github.com/hermes-go/hermes/internal/agent"
)

// showsEvents reports whether out takes the agent's structured events.
func showsEvents(out ChatOutput) bool {
	switch out.(type) {
	case agent.ToolObserver, agent.ReasoningOutput, agent.WaitDisplay:
		return true
	}
	return false
}

// redactedEvents is redactedOutput for an output that takes the agent's
// structured events: each is passed on with its strings masked. It is only
// used for such an output, so a plain one keeps the agent's "⚙ name" line;
// an event the output does not take falls back to what the agent would do
// without it.
type redactedEvents struct{ redactedOutput }

// ToolStart implements agent.ToolObserver.
func (o redactedEvents) ToolStart(e agent.ToolStartEvent) {
	obs, ok := o.ChatOutput.(agent.ToolObserver)
	if !ok {
		o.Progress("⚙ " + e.Name)
		return
	}
	e.Name, e.Args = o.redact(e.Name), o.redact(e.Args)
	obs.ToolStart(e)
}

// ToolEnd implements agent.ToolObserver.
func (o redactedEvents) ToolEnd(e agent.ToolEndEvent) {
	if obs, ok := o.ChatOutput.(agent.ToolObserver); ok {
		e.Name, e.Result, e.Err = o.redact(e.Name), o.redact(e.Result), o.redact(e.Err)
		obs.ToolEnd(e)
	}
}

// Reasoning implements agent.ReasoningOutput. Like Text, it is masked piece by
// piece.
func (o redactedEvents) Reasoning(delta string) {
	if r, ok := o.ChatOutput.(agent.ReasoningOutput); ok {
		r.Reasoning(o.redact(delta))
	}
}

// Waiting implements agent.WaitDisplay; without one below, a retry is a
// Progress line, as the agent shows it to a plain output.
func (o redactedEvents) Waiting(status string) (update func(string), done func()) {
	if w, ok := o.ChatOutput.(agent.WaitDisplay); ok {
		up, done := w.Waiting(o.redact(status))
		return func(s string) { up(o.redact(s)) }, done
	}
	return o.Progress, func() {}
}
