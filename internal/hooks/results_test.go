package hooks

import (
	"reflect"
	"strings"
	"testing"
)

func block(msg string) map[string]any { return map[string]any{"action": "block", "message": msg} }
func modify(args map[string]any) map[string]any {
	return map[string]any{"action": "modify", "args": args}
}

func TestPreToolCall(t *testing.T) {
	orig := map[string]any{"path": "a.txt", "content": "x"}
	tests := []struct {
		name     string
		results  []any
		want     Directive
		wantArgs map[string]any // nil: no modify applied
	}{
		{name: "no results", results: nil, want: Directive{}},
		{name: "observer returns ignored", results: []any{"text", 3, nil, []any{"x"}, map[string]any{}}, want: Directive{}},
		{name: "block", results: []any{block("no")}, want: Directive{Action: "block", Message: "no"}},
		{name: "block needs a message", results: []any{
			map[string]any{"action": "block"},
			map[string]any{"action": "block", "message": ""},
			map[string]any{"action": "block", "message": 42},
		}, want: Directive{}},
		{name: "first valid block wins among blocks", results: []any{block(""), block("first"), block("second")},
			want: Directive{Action: "block", Message: "first"}},
		{name: "approve with message and rule key", results: []any{
			map[string]any{"action": "approve", "message": "why", "rule_key": "  scope:x  "},
		}, want: Directive{Action: "approve", Message: "why", RuleKey: "scope:x"}},
		{name: "approve message optional, odd types dropped", results: []any{
			map[string]any{"action": "approve", "message": 5, "rule_key": []string{"x"}},
		}, want: Directive{Action: "approve"}},
		{name: "first approve wins", results: []any{
			map[string]any{"action": "approve", "message": "one"},
			map[string]any{"action": "approve", "message": "two"},
		}, want: Directive{Action: "approve", Message: "one"}},
		{name: "block after approve wins", results: []any{
			map[string]any{"action": "approve", "message": "ask"}, block("veto"),
		}, want: Directive{Action: "block", Message: "veto"}},
		{name: "block before approve wins", results: []any{
			block("veto"), map[string]any{"action": "approve", "message": "ask"},
		}, want: Directive{Action: "block", Message: "veto"}},
		{name: "invalid block does not beat approve", results: []any{
			map[string]any{"action": "approve"}, block(""),
		}, want: Directive{Action: "approve"}},
		{name: "action is case sensitive", results: []any{map[string]any{"action": "BLOCK", "message": "m"}},
			want: Directive{}},
		{name: "modify merges in order, later key wins", results: []any{
			modify(map[string]any{"path": "b.txt", "mode": "w"}),
			modify(map[string]any{"path": "c.txt"}),
		}, want: Directive{}, wantArgs: map[string]any{"path": "c.txt", "content": "x", "mode": "w"}},
		{name: "modify applied even when a later result blocks", results: []any{
			modify(map[string]any{"content": "y"}), block("stop"),
		}, want: Directive{Action: "block", Message: "stop"}, wantArgs: map[string]any{"path": "a.txt", "content": "y"}},
		{name: "modify applied when an earlier result blocks", results: []any{
			block("stop"), modify(map[string]any{"content": "y"}),
		}, want: Directive{Action: "block", Message: "stop"}, wantArgs: map[string]any{"path": "a.txt", "content": "y"}},
		{name: "invalid modify shapes ignored", results: []any{
			map[string]any{"action": "modify"},
			map[string]any{"action": "modify", "args": map[string]any{}},
			map[string]any{"action": "modify", "args": "path=z"},
		}, want: Directive{}},
		{name: "shell block form", results: []any{map[string]any{"decision": "block", "reason": "policy"}},
			want: Directive{Action: "block", Message: "policy"}},
		{name: "shell block needs a reason", results: []any{map[string]any{"decision": "block"}},
			want: Directive{}},
		{name: "shell block beats approve", results: []any{
			map[string]any{"action": "approve"}, map[string]any{"decision": "block", "reason": "policy"},
		}, want: Directive{Action: "block", Message: "policy"}},
		{name: "shell modify form", results: []any{
			map[string]any{"decision": "modify", "tool_input": map[string]any{"content": "z"}},
			modify(map[string]any{"extra": true}),
		}, want: Directive{}, wantArgs: map[string]any{"path": "a.txt", "content": "z", "extra": true}},
		{name: "shell approve is not an escalation", results: []any{map[string]any{"decision": "approve"}},
			want: Directive{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"path": "a.txt", "content": "x"}
			got, gotArgs := PreToolCall(tt.results, args)
			if got != tt.want {
				t.Errorf("directive = %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(gotArgs, tt.wantArgs) {
				t.Errorf("args = %v, want %v", gotArgs, tt.wantArgs)
			}
			if !reflect.DeepEqual(args, orig) {
				t.Errorf("original args changed: %v", args)
			}
		})
	}
}

func TestPreToolCallModifyWithNilArgs(t *testing.T) {
	_, got := PreToolCall([]any{modify(map[string]any{"k": 1})}, nil)
	if !reflect.DeepEqual(got, map[string]any{"k": 1}) {
		t.Errorf("args = %v", got)
	}
}

func TestFirstString(t *testing.T) {
	tests := []struct {
		name     string
		results  []any
		nonEmpty bool
		want     string
		wantOK   bool
	}{
		{"none", nil, false, "", false},
		{"non-strings skipped", []any{1, map[string]any{"x": "y"}, "a", "b"}, false, "a", true},
		{"empty string allowed", []any{"", "b"}, false, "", true},
		{"empty string skipped when nonEmpty", []any{"", 3, "b"}, true, "b", true},
		{"only empty when nonEmpty", []any{""}, true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FirstString(tt.results, tt.nonEmpty)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("FirstString = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestLLMContext(t *testing.T) {
	long := strings.Repeat("é", MaxContextChars+1) // over the cap in characters
	exact := strings.Repeat("é", MaxContextChars)  // at the cap, though longer in bytes
	tests := []struct {
		name          string
		results       []any
		wantPieces    []string
		wantOversized []int
		wantText      string
	}{
		{name: "none", results: nil, wantText: ""},
		{name: "strings and context dicts in order", results: []any{
			"one", map[string]any{"context": "two"}, "", map[string]any{"context": ""},
			map[string]any{"other": "x"}, 5, map[string]any{"context": 7}, "three",
		}, wantPieces: []string{"one", "two", "three"}, wantText: "one\n\ntwo\n\nthree"},
		{name: "cap counts characters", results: []any{"a", exact, long},
			wantPieces: []string{"a", exact, long}, wantOversized: []int{2},
			wantText: "a\n\n" + exact + "\n\n" + exact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LLMContext(tt.results)
			if !reflect.DeepEqual(got.Pieces, tt.wantPieces) {
				t.Errorf("pieces = %q, want %q", got.Pieces, tt.wantPieces)
			}
			if !reflect.DeepEqual(got.Oversized, tt.wantOversized) {
				t.Errorf("oversized = %v, want %v", got.Oversized, tt.wantOversized)
			}
			if text := got.Text(); text != tt.wantText {
				t.Errorf("text = %.60q... (len %d), want len %d", text, len(text), len(tt.wantText))
			}
		})
	}
}

func TestLLMContextSpilledPieceReplaced(t *testing.T) {
	r := LLMContext([]any{"keep", strings.Repeat("x", MaxContextChars+5)})
	if !reflect.DeepEqual(r.Oversized, []int{1}) {
		t.Fatalf("oversized = %v", r.Oversized)
	}
	r.Pieces[r.Oversized[0]] = "[spilled to file]"
	if got, want := r.Text(), "keep\n\n[spilled to file]"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}
