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
