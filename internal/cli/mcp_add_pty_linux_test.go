package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a real terminal: a hermes://mcp link is added only after a typed yes; no or
// Ctrl-C (exit 130) leave config.yaml as it was. A secret header is offered to
// .env with [Y/n]: Enter stores it, n saves nothing, Ctrl-C is 130 with nothing written.
func TestMCPOnATerminal(t *testing.T) {
	cfg := base64.RawURLEncoding.EncodeToString([]byte(`{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}`))
	link := "hermes://mcp/install?name=everything&config=" + cfg
	addSecret := []string{"mcp", "add", "docs", "--url", "https://docs.example.com/mcp", "--header", "Authorization=Bearer sekrit-value-123"}
	const linkPrompt = "Add MCP server everything? [y/N]: "
	const secretPrompt = "Store Authorization in ~/.hermes/.env as MCP_DOCS_AUTHORIZATION? [Y/n] "
	tests := []struct {
		name   string
		args   []string
		prompt string
		typed  []byte
		code   int
		config string // in config.yaml afterwards ("" = no config.yaml)
		env    string // in .env afterwards ("" = no .env)
		shown  string
	}{
		{"link yes", []string{"open-url", link}, linkPrompt, []byte("y\n"), 0, "server-everything", "", "Saved mcp_servers.everything"},
		{"link no", []string{"open-url", link}, linkPrompt, []byte("n\n"), 1, "", "", "Aborted — nothing added."},
		{"link enter is no", []string{"open-url", link}, linkPrompt, []byte("\n"), 1, "", "", "Aborted — nothing added."},
		{"link ctrl-c", []string{"open-url", link}, linkPrompt, []byte{0x03}, 130, "", "", "interrupted"},
		{"from-link asks too", []string{"mcp", "add", "--from-link", link}, linkPrompt, []byte("y\n"), 0, "server-everything", "", "Saved"},
		{"secret enter", addSecret, secretPrompt, []byte("\n"), 0, "${MCP_DOCS_AUTHORIZATION}", "MCP_DOCS_AUTHORIZATION='Bearer sekrit-value-123'", "Stored Authorization in ~/.hermes/.env as MCP_DOCS_AUTHORIZATION\r\n"},
		{"secret no", addSecret, secretPrompt, []byte("n\n"), 1, "", "", "Not saved: config.yaml never holds a secret."},
		{"secret ctrl-c", addSecret, secretPrompt, []byte{0x03}, 130, "", "", "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			hh := filepath.Join(home, ".hermes")
			p := startOnTerminal(t, termEnv(home), tt.args...)
			p.waitFor(tt.prompt)
			if _, err := p.master.Write(tt.typed); err != nil {
				t.Fatal(err)
			}
			if code := p.exitCode(); code != tt.code {
				t.Fatalf("exit %d, want %d; the terminal showed:\n%s", code, tt.code, p.out.String())
			}
			shown := p.out.String()
			if !strings.Contains(shown, tt.shown) {
				t.Errorf("the terminal lacks %q:\n%s", tt.shown, shown)
			}
			if strings.Contains(readConfig(t, hh), "sekrit") {
				t.Errorf("a secret in config.yaml:\n%s", readConfig(t, hh))
			}
			if cfg := readConfig(t, hh); tt.config == "" && strings.Contains(cfg, "mcp_servers") || !strings.Contains(cfg, tt.config) {
				t.Errorf("config.yaml, want %q in it (none when empty):\n%s", tt.config, cfg)
			}
			env, err := os.ReadFile(filepath.Join(hh, ".env"))
			if tt.env == "" && err == nil || tt.env != "" && !strings.Contains(string(env), tt.env) {
				t.Errorf(".env (%v), want %q:\n%s", err, tt.env, env)
			}
		})
	}
}
