package chatui

import tea "charm.land/bubbletea/v2"

// Output is the agent's Output of the chat on the screen: every piece of the
// turn becomes a message to the program (the agent's goroutine blocks until
// the program takes it, which keeps the order).
type Output struct{ send func(tea.Msg) }

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
