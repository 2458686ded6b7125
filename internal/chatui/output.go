package chatui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/agent"
)

var (
	_ agent.Output          = (*Output)(nil)
	_ agent.ToolObserver    = (*Output)(nil)
	_ agent.ReasoningOutput = (*Output)(nil)
	_ agent.WaitDisplay     = (*Output)(nil)
)

// Output is the agent's Output of the chat on the screen: every piece of the
// turn becomes a message to the program (the agent's goroutine blocks until
// the program takes it, which keeps the order).
type Output struct {
	send func(tea.Msg)
	// diff renders what a write_file or patch call will change; it runs in
	// ToolStart, on the agent's goroutine, so the file is read before the
	// tool writes it.
	diff func(name, args string) (string, bool)
}

// Text is a piece of the streamed answer.
func (o *Output) Text(s string) { o.send(textMsg{s}) }

// Progress is a status line: a tool starting, a retry.
func (o *Output) Progress(s string) { o.send(progressMsg{s}) }

// Reasoning is a piece of the model's thinking (agent.ReasoningOutput).
func (o *Output) Reasoning(s string) { o.send(reasoningMsg{s}) }

// Waiting shows the wait for the model in the status line (agent.WaitDisplay):
// update replaces its text (a retry), done ends it.
func (o *Output) Waiting(status string) (update func(string), done func()) {
	o.send(waitMsg{status: status})
	return func(s string) { o.send(waitMsg{status: s, retry: true}) }, func() { o.send(waitMsg{done: true}) }
}

// waitMsg is the wait's status: the first ("waiting for MODEL"), a retry, or its end.
type waitMsg struct {
	status      string
	retry, done bool
}

// ToolStart is a tool call about to run (agent.ToolObserver).
func (o *Output) ToolStart(e agent.ToolStartEvent) {
	msg := toolStartMsg{id: e.CallID, name: e.Name, args: e.Args}
	if o.diff != nil {
		msg.diff, msg.hasDiff = o.diff(e.Name, e.Args)
	}
	o.send(msg)
}

// ToolEnd is a tool call that ended.
func (o *Output) ToolEnd(e agent.ToolEndEvent) {
	o.send(toolEndMsg{id: e.CallID, name: e.Name, result: e.Result, err: e.Err, blocked: e.Blocked, dur: e.Duration})
}
