package cli

import (
	"context"
	"strings"
	"testing"
)

// TestCompletionsReachTheirVerbs: every path in argCompletions names a verb (a
// renamed verb would otherwise lose its completion without a sound).
func TestCompletionsReachTheirVerbs(t *testing.T) {
	root := newRootCmd(context.Background(), testFactory())
	for path := range argCompletions() {
		cmd, _, err := root.Find(strings.Fields(path))
		if err != nil || cmd.CommandPath() != "hermes "+path {
			t.Errorf("%q: found %q (%v)", path, cmd.CommandPath(), err)
			continue
		}
		if cmd.ValidArgsFunction == nil {
			t.Errorf("%q has no completion", path)
		}
	}
	if chat, _, _ := root.Find([]string{"chat"}); chat != nil {
		if _, ok := chat.GetFlagCompletionFunc("resume"); !ok {
			t.Error("chat --resume has no completion")
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ name, desc, want string }{
		{"a", "", "a"},
		{"a", "one\nline\tonly ", "a\tone line only"},
		{"a", strings.Repeat("x", 70), "a\t" + strings.Repeat("x", 59) + "…"},
	}
	for _, tt := range tests {
		if got := describe(tt.name, tt.desc); got != tt.want {
			t.Errorf("describe(%q, %q) = %q, want %q", tt.name, tt.desc, got, tt.want)
		}
	}
}
