package agent

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/tools"
)

// interruptedToolResult answers a tool call whose process died while it ran.
var interruptedToolResult = tools.ErrorResult("This tool call was interrupted before it finished (hermes stopped while it ran); "+
	"its result is lost and whether it had any effect is unknown.", nil)

// ResumeSession continues a stored conversation where it stopped. A tool call
// with no answer (hermes was killed while it ran) gets one saying it was
// interrupted, right after the calls of its message, since endpoints refuse a
// history with an unanswered call. Answers added at the end of the history are
// recorded, so the store says so too; one further back (a store written
// before this repair existed) is repaired again at every load.
func (a *Agent) ResumeSession(ctx context.Context, id string, history []llm.Message) *Session {
	msgs, tail := answerDangling(history)
	s := &Session{ID: id, Messages: msgs, Resumed: true}
	for _, m := range tail {
		a.record(ctx, s, m)
		if a.o.Recorder != nil {
			_ = a.o.Recorder.RecordToolCall(context.WithoutCancel(ctx), id, ToolRecord{CallID: m.ToolCallID, Name: m.Name,
				Args: callArgs(msgs, m.ToolCallID), Result: m.Content, Status: tools.StatusError, Error: "interrupted"})
		}
	}
	return s
}

// RunStored runs the turn whose user message is already stored at
// s.Messages[at] (a redelivered update whose first run stopped before its
// answer): the model is called on the history as it stands, everything after
// that message kept, and the message is not appended again.
func (a *Agent) RunStored(ctx context.Context, s *Session, at int) (*Turn, error) {
	if at < 0 {
		return nil, fmt.Errorf("agent: no stored message %d to continue the turn from", at)
	}
	return a.run(ctx, s, "", at)
}

// answerDangling returns history with an interrupted-answer after every tool
// call that has none, and which of those answers end the history.
func answerDangling(history []llm.Message) (out, tail []llm.Message) {
	out = make([]llm.Message, 0, len(history))
	for i := 0; i < len(history); i++ {
		m := history[i]
		out = append(out, m)
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for ; i+1 < len(history) && history[i+1].Role == llm.RoleTool; i++ {
			answered[history[i+1].ToolCallID] = true
			out = append(out, history[i+1])
		}
		var added []llm.Message
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				added = append(added, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: interruptedToolResult})
			}
		}
		out = append(out, added...)
		if i == len(history)-1 {
			tail = added
		}
	}
	return out, tail
}

func callArgs(msgs []llm.Message, callID string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == callID {
				return c.Function.Arguments
			}
		}
	}
	return ""
}
