package llmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

func TestReadScript(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
		wantErr    bool
	}{
		{"yaml object", "replies:\n  - content: hi\n  - status: 429\n    retry_after: \"0\"\n  - delay: 250ms\n    content: slow\n", 3, false},
		{"json list", `[{"content":"a"},{"tool_calls":[{"name":"f","arguments":{"x":1}}]}]`, 2, false},
		{"bad duration", "replies:\n  - delay: soon\n", 0, true},
		{"not yaml", "replies: [\n", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s")
			if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadScript(p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if len(got) != tc.want {
				t.Fatalf("%d replies: %+v", len(got), got)
			}
			if tc.name == "yaml object" && (got[1].Status != 429 || got[1].RetryAfter != "0" || time.Duration(got[2].Delay) != 250*time.Millisecond) {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}

func TestPieces(t *testing.T) {
	got := pieces("héllo", 2)
	if len(got) != 3 || got[0] != "hé" || got[2] != "o" {
		t.Errorf("pieces = %q", got)
	}
}

func TestInvalidHistory(t *testing.T) {
	call := func(ids ...string) llm.Message {
		m := llm.Message{Role: llm.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Type: "function", Function: llm.FunctionCall{Name: "f"}})
		}
		return m
	}
	answer := func(id string) llm.Message { return llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: "r"} }
	user := llm.Message{Role: llm.RoleUser, Content: "u"}
	cases := []struct {
		name string
		msgs []llm.Message
		want string // a part of the complaint; "" = valid
	}{
		{"plain", []llm.Message{user, {Role: llm.RoleAssistant, Content: "a"}, user}, ""},
		{"every call answered", []llm.Message{user, call("a", "b"), answer("b"), answer("a"), user}, ""},
		{"a call left unanswered at the end", []llm.Message{user, call("a", "b"), answer("a")}, `tool_call_id "b" has no tool message`},
		{"a user message before the answer", []llm.Message{user, call("a"), user, answer("a")}, `tool_call_id "a" has no tool message`},
		{"an answer to no call", []llm.Message{user, answer("x")}, "answers no tool call"},
		{"an answer twice", []llm.Message{user, call("a"), answer("a"), answer("a")}, "did not ask for (or already got an answer)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := invalidHistory(tc.msgs)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("invalidHistory = %q, want %q", got, tc.want)
			}
		})
	}
}
