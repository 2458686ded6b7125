package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// A history whose tool calls were never answered (hermes was killed while they
// ran) is repaired on resume: the endpoint, which refuses such a history with a
// 400 as real ones do, takes the next turn, and answers added at the end are
// recorded.
func TestResumeAnswersDanglingToolCalls(t *testing.T) {
	call := func(ids ...string) llm.Message {
		m := llm.Message{Role: "assistant"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Type: "function", Function: llm.FunctionCall{Name: "echo", Arguments: `{"text":"` + id + `"}`}})
		}
		return m
	}
	answer := func(id string) llm.Message {
		return llm.Message{Role: "tool", ToolCallID: id, Name: "echo", Content: "done " + id}
	}
	sys, user := llm.Message{Role: "system", Content: "sys"}, llm.Message{Role: "user", Content: "u"}
	tests := []struct {
		name         string
		history      []llm.Message
		wantIDs      string // tool_call_id of each tool message after the repair, in order
		wantRecorded int    // answers stored at once (those that end the history)
	}{
		{"nothing to repair", []llm.Message{sys, user, call("a"), answer("a"), {Role: "assistant", Content: "ok"}}, "a", 0},
		{"killed during the only call", []llm.Message{sys, user, call("a")}, "a", 1},
		{"killed during the second of two", []llm.Message{sys, user, call("a", "b"), answer("a")}, "a,b", 1},
		{"an older store: later turns after the dangling call", []llm.Message{sys, user, call("a", "b"), answer("b"), user,
			{Role: "assistant", Content: "x"}}, "b,a", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("resumed"))
			rec := &memRecorder{}
			ag := newAgent(t, srv, rec)
			s := ag.ResumeSession(context.Background(), "s", tt.history)
			var ids []string
			for _, m := range s.Messages {
				if m.Role == "tool" {
					ids = append(ids, m.ToolCallID)
				}
			}
			if got := strings.Join(ids, ","); got != tt.wantIDs {
				t.Errorf("tool answers %s, want %s", got, tt.wantIDs)
			}
			if len(rec.msgs) != tt.wantRecorded || len(rec.calls) != tt.wantRecorded {
				t.Errorf("recorded %d messages and %d tool calls, want %d", len(rec.msgs), len(rec.calls), tt.wantRecorded)
			}
			for _, m := range rec.msgs {
				if !strings.Contains(m.Content, "interrupted before it finished") {
					t.Errorf("recorded answer %q does not say the call was interrupted", m.Content)
				}
			}
			turn, err := ag.Run(context.Background(), s, "again")
			if err != nil || turn.Final != "resumed" {
				t.Fatalf("the next turn: %v (the endpoint refuses a history with an unanswered call)", err)
			}
		})
	}
}

// turnRecorder tells the turn's own user message (AppendTurnMessage) from
// the rest.
type turnRecorder struct {
	memRecorder
	turn []llm.Message
}

func (r *turnRecorder) AppendTurnMessage(_ context.Context, _ string, m llm.Message) error {
	r.turn = append(r.turn, m)
	return nil
}

// RunStored continues a turn whose user message is stored (a redelivered
// update whose first run stopped before answering): the model sees that
// message once, after it whatever the first run stored (a tool call answered
// by the resume's repair), and only the new answer is recorded. Run records
// its own user message through a TurnRecorder.
func TestRunStored(t *testing.T) {
	call := llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "echo", Arguments: `{}`}}}}
	tests := []struct {
		name      string
		history   []llm.Message
		at        int
		wantRoles string // what the model is sent
	}{
		{"stopped before the model answered", []llm.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "same"}}, 2, "user,assistant,user"},
		{"stopped during a tool call", []llm.Message{{Role: "user", Content: "same"}, call}, 0, "user,assistant,tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("answer"))
			rec := &turnRecorder{}
			ag := newAgent(t, srv, rec)
			s := ag.ResumeSession(context.Background(), "s", tt.history)
			rec.msgs = nil // the repair's own record
			turn, err := ag.RunStored(context.Background(), s, tt.at)
			if err != nil || turn.Final != "answer" {
				t.Fatalf("RunStored = %+v, %v", turn, err)
			}
			if got := roles(srv.LastRequest(t).Messages); got != tt.wantRoles {
				t.Errorf("the model was sent %s, want %s", got, tt.wantRoles)
			}
			if len(rec.turn) != 0 || len(rec.msgs) != 1 || rec.msgs[0].Content != "answer" {
				t.Errorf("recorded %+v and turn messages %+v, want only the answer", rec.msgs, rec.turn)
			}
			if _, err := ag.RunStored(context.Background(), s, len(s.Messages)); err == nil {
				t.Error("RunStored past the history: no error")
			}
			srv.Enqueue(llmtest.Text("next"))
			rec.msgs = nil
			if _, err := ag.Run(context.Background(), s, "new"); err != nil {
				t.Fatal(err)
			}
			if len(rec.turn) != 1 || rec.turn[0].Content != "new" || len(rec.msgs) != 1 || rec.msgs[0].Content != "next" {
				t.Errorf("Run recorded turn messages %+v and %+v", rec.turn, rec.msgs)
			}
		})
	}
}
