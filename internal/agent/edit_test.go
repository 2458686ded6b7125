package agent

import (
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
)

func TestDropLastExchange(t *testing.T) {
	msg := func(role, text string) llm.Message { return llm.Message{Role: role, Content: text} }
	tests := []struct {
		name     string
		msgs     []llm.Message
		wantIdx  int
		wantText string
		wantOK   bool
		wantLeft int
	}{
		{"empty", nil, 0, "", false, 0},
		{"system only", []llm.Message{msg("system", "s")}, 0, "", false, 1},
		{"one exchange", []llm.Message{msg("system", "s"), msg("user", "a"), msg("assistant", "b")}, 1, "a", true, 1},
		{"tools after the last question", []llm.Message{msg("system", "s"), msg("user", "a"), msg("assistant", "b"),
			msg("user", "c"), {Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "1"}}}, msg("tool", "r"), msg("assistant", "d")}, 3, "c", true, 3},
		{"a question not answered", []llm.Message{msg("user", "a")}, 0, "a", true, 0},
	}
	for _, tt := range tests {
		s := &Session{Messages: tt.msgs}
		idx, text, ok := s.DropLastExchange()
		if idx != tt.wantIdx || text != tt.wantText || ok != tt.wantOK || len(s.Messages) != tt.wantLeft {
			t.Errorf("%s: DropLastExchange = %d, %q, %v leaving %d; want %d, %q, %v leaving %d",
				tt.name, idx, text, ok, len(s.Messages), tt.wantIdx, tt.wantText, tt.wantOK, tt.wantLeft)
		}
	}
}
