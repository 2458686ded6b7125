package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ToolStartEvent is a tool call about to run: its id, the tool's name and the
// arguments as the model sent them (raw JSON).
type ToolStartEvent struct{ CallID, Name, Args string }

// ToolEndEvent is a tool call that ended: the result as the model gets it
// (redacted and capped), the error message when it failed, Blocked when a
// guard, a hook or the approval refused it, and how long it took by the
// agent's clock.
type ToolEndEvent struct {
	CallID, Name, Result, Err string
	Blocked                   bool
	Duration                  time.Duration
}

// ToolObserver is an Output that shows tool calls itself (the terminal chat):
// it gets ToolStart and ToolEnd instead of the "⚙ name" Progress line.
type ToolObserver interface {
	ToolStart(ToolStartEvent)
	ToolEnd(ToolEndEvent)
}

// ReasoningOutput is an Output that shows the model's reasoning (the
// reasoning_content / reasoning fields), apart from the answer. An Output
// without it never sees reasoning.
type ReasoningOutput interface {
	Reasoning(delta string)
}

// toolStarted tells the Output that a tool call starts.
func (a *Agent) toolStarted(ev ToolStartEvent) {
	switch o := a.o.Output.(type) {
	case nil:
	case ToolObserver:
		o.ToolStart(ev)
	default:
		o.Progress(fmt.Sprintf("⚙ %s", ev.Name))
	}
}

// toolEnded tells a ToolObserver that a tool call ended.
func (a *Agent) toolEnded(ev ToolEndEvent) {
	o, ok := a.o.Output.(ToolObserver)
	if !ok {
		return
	}
	if !ev.Blocked {
		if msg, blocked := blockedResult(ev.Result); blocked {
			ev.Blocked = true
			if ev.Err == "" {
				ev.Err = msg
			}
		}
	}
	o.ToolEnd(ev)
}

// blockedResult reports whether a tool's result says it refused to act: the
// terminal tool answers a denied or blocked command with status "blocked" and
// the reason in "error" (upstream's shape), an ordinary result as far as the
// pipeline is concerned.
func blockedResult(result string) (msg string, blocked bool) {
	if !strings.Contains(result, `"blocked"`) {
		return "", false
	}
	var r struct {
		Status string `json:"status"`
		Error  any    `json:"error"`
	}
	if json.Unmarshal([]byte(result), &r) != nil || r.Status != "blocked" {
		return "", false
	}
	msg, _ = r.Error.(string)
	return msg, true
}

// reasoning hands a piece of reasoning to an Output that shows it.
func (a *Agent) reasoning(delta string) {
	if delta == "" {
		return
	}
	if o, ok := a.o.Output.(ReasoningOutput); ok {
		o.Reasoning(delta)
	}
}
