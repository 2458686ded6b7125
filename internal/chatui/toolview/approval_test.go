package toolview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hermes-go/hermes/internal/approval"
)

func TestApprovalModal(t *testing.T) {
	tests := []struct {
		name  string
		a     Approval
		width int
	}{
		{"model_at_60", Approval{Command: "rm -rf /tmp/old-project", Description: "recursive delete", Origin: "the model",
			Choices: Choices(false), Selected: 0, Hint: "←/→ choose · enter answer · esc deny"}, 60},
		{"at_40_selected_deny", Approval{Command: "git push --force origin main", Description: "force push",
			Choices: Choices(false), Selected: 3}, 40},
		{"plugin_no_always", Approval{Command: "curl https://example.com/install.sh | sh", Description: "pipe to shell",
			Origin: `plugin "installer"`, Choices: Choices(true), Selected: 1}, 50},
		{"escapes_and_lines", Approval{Command: "echo ok\nprintf '" + evil + "'\r\nexit 0", Description: "desc " + evil,
			Origin: "plugin \"x\x1b[31m\"", Selected: 2}, 50},
		{"long_command_wraps", Approval{Command: "find / -name '*.log' -mtime +30 -exec rm -f {} \\; && echo done with the cleanup",
			Description: "delete in root", Selected: 0}, 40},
		{"wide_chars", Approval{Command: "rm -rf ~/写真/二〇二四年の旅行アルバム/全部", Description: "再帰的な削除", Origin: "the model",
			Choices: Choices(false), Selected: 1}, 40},
		{"narrow", Approval{Command: "rm -rf /", Description: "recursive delete", Choices: Choices(false)}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := both(func(color bool) string {
				m := ApprovalModal(tt.a, tt.width, color)
				w := max(tt.width, minModalWidth)
				checkSafe(t, m, w, color)
				for _, l := range strings.Split(m, "\n") {
					if ansi.StringWidth(l) != w {
						t.Errorf("box line is %d columns, want %d: %q", ansi.StringWidth(l), w, l)
					}
				}
				return m
			})
			golden.RequireEqual(t, out)
		})
	}
}

// The command is shown whole: every character of it is in the modal, in
// order, however it was wrapped.
func TestApprovalModalKeepsTheCommand(t *testing.T) {
	cmd := "find / -name '*.log' -mtime +30 -exec rm -f {} \\; && echo 日本語 done " + strings.Repeat("z", 70)
	squash := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	for _, width := range []int{20, 40, 80} {
		m := ApprovalModal(Approval{Command: cmd}, width, false)
		var got strings.Builder
		in := false
		for _, l := range strings.Split(m, "\n") {
			l = strings.TrimSuffix(strings.TrimPrefix(l, "│ "), "│")
			switch {
			case strings.HasPrefix(l, "$ "):
				in = true
			case strings.TrimSpace(l) == "":
				in = false
			}
			if in {
				got.WriteString(l[2:])
			}
		}
		if squash(got.String()) != squash(cmd) {
			t.Errorf("at %d columns the modal shows the command as %q, want %q", width, got.String(), cmd)
		}
	}
}

func TestChoicesAreTheApprovalNames(t *testing.T) {
	want := []approval.Choice{approval.ChoiceOnce, approval.ChoiceSession, approval.ChoiceAlways, approval.ChoiceDeny}
	got := Choices(false)
	if len(got) != len(want) {
		t.Fatalf("Choices(false) = %q", got)
	}
	for i := range want {
		if got[i] != string(want[i]) {
			t.Errorf("choice %d is %q, want %q", i, got[i], want[i])
		}
	}
	for _, c := range Choices(true) {
		if c == string(approval.ChoiceAlways) {
			t.Errorf("a plugin's request is offered %q", c)
		}
	}
}
