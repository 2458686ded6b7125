package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a real terminal an unapproved shell hook is asked about once: yes runs it and
// records the approval, no (or Enter) neither runs nor records it, Ctrl-C stops
// hermes (130) with nothing recorded. Once approved it is not asked about again.
func TestShellHookConsentOnATerminal(t *testing.T) {
	const prompt = "Allow this hook to run? [y/N] "
	tests := []struct {
		name    string
		typed   []byte
		code    int
		ran     bool
		shown   string
		allowed bool
	}{
		{"yes", []byte("y\n"), 0, true, `result: {"action":"block","message":"guarded"}`, true},
		{"no", []byte("n\n"), 0, false, "Not approved: ~/guard.sh does not run (you are asked again next time).", false},
		{"enter is no", []byte("\n"), 0, false, "skipped: not approved", false},
		{"ctrl-c", []byte{0x03}, 130, false, "interrupted", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			hh := filepath.Join(home, ".hermes")
			if err := os.MkdirAll(hh, 0o700); err != nil {
				t.Fatal(err)
			}
			write := func(p, body string, mode os.FileMode) {
				if err := os.WriteFile(p, []byte(body), mode); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(home, "guard.sh"), "#!/bin/bash\ntouch \"$HOME/ran\"\necho guarded >&2\nexit 2\n", 0o755)
			write(filepath.Join(hh, "config.yaml"), "hooks:\n  pre_tool_call:\n    - command: ~/guard.sh\n", 0o600)

			p := startOnTerminal(t, termEnv(home), "hooks", "test", "pre_tool_call")
			p.waitFor(prompt)
			shown := p.out.String()
			for _, want := range []string{"Event:   pre_tool_call", "Command: ~/guard.sh", "hooks.pre_tool_call[0]", "Approve only commands you trust."} {
				if !strings.Contains(shown, want) {
					t.Errorf("the prompt lacks %q:\n%s", want, shown)
				}
			}
			if _, err := p.master.Write(tt.typed); err != nil {
				t.Fatal(err)
			}
			if code := p.exitCode(); code != tt.code {
				t.Fatalf("exit %d, want %d; the terminal showed:\n%s", code, tt.code, p.out.String())
			}
			if !strings.Contains(p.out.String(), tt.shown) {
				t.Errorf("the terminal lacks %q:\n%s", tt.shown, p.out.String())
			}
			if _, err := os.Stat(filepath.Join(home, "ran")); (err == nil) != tt.ran {
				t.Errorf("hook ran = %v, want %v", err == nil, tt.ran)
			}
			list, _ := os.ReadFile(filepath.Join(hh, "shell-hooks-allowlist.json"))
			if got := strings.Contains(string(list), `"command": "~/guard.sh"`); got != tt.allowed {
				t.Errorf("allowlist records it = %v, want %v:\n%s", got, tt.allowed, list)
			}
			if !tt.allowed {
				return
			}
			// Approved once, it is not asked about again.
			again := startOnTerminal(t, termEnv(home), "hooks", "test", "pre_tool_call")
			if code := again.exitCode(); code != 0 || strings.Contains(again.out.String(), prompt) {
				t.Errorf("second run: exit %d, asked again = %v:\n%s", code, strings.Contains(again.out.String(), prompt), again.out.String())
			}
		})
	}
}
