package mcp

import "testing"

func TestLooksSecret(t *testing.T) {
	tests := []struct {
		key, value string
		want       bool
	}{
		{"Authorization", "Bearer abc", true},
		{"authorization", "x", true},
		{"Proxy-Authorization", "Basic dXNlcjpwYXNz", true},
		{"X-API-Key", "123", true},
		{"apiKey", "123", true},
		{"XAPIKey", "123", true},
		{"GITHUB_TOKEN", "abc", true},
		{"X-Auth-Token", "abc", true},
		{"DB_PASSWORD", "hunter2", true},
		{"client_secret", "s", true},
		{"OPENAI_APIKEY", "v", true},
		{"accessToken", "v", true},
		{"GITHUB_PAT", "v", true},
		{"Cookie", "sid=1", true},
		{"API_KEY_2", "v", true}, // a trailing number does not hide the word
		// Values by shape, whatever the key.
		{"X-Thing", "Bearer eyJhbGciOiJIUzI1NiJ9", true},
		{"X-Thing", "token 0123456789abcdef", true},
		{"GH", "ghp_" + "abcdefghijklmnopqrstuvwxyz0123", true},
		{"OPTS", "--key=github_pat_" + "11ABCDEFG0123456789_abcdefghij", true},
		{"MODEL", "sk-ant-" + "api03-abcdefghijklmnop", true},
		{"SLACK", "xoxb-" + "1234567890-abcdef", true},
		{"AWS", "AKIA" + "ABCDEFGHIJKLMNOP", true},
		{"PEM", "-----BEGIN RSA PRIVATE KEY-----", true},
		// Not secrets.
		{"Content-Type", "application/json", false},
		{"X-Request-Id", "42", false},
		{"KEYBOARD", "us", false},
		{"MONKEY_MODE", "on", false},
		{"TOKENIZER", "bpe", false},
		{"KEY_FILE", "/etc/key.pem", false},
		{"TOKEN_URL", "https://x/token", false},
		{"PASSWORD_PATH", "/run/pw", false},
		{"PATH", "/usr/bin", false},
		{"LOG_LEVEL", "debug", false},
		{"X-Thing", "sk-learn", false}, // too short to be a key
		{"TASK", "task-abcdefghijklmnopqrstuvwxyz", false},
		{"X-Thing", "Bearer", false},
		// A reference holds no secret.
		{"Authorization", "${MCP_FS_AUTHORIZATION}", false},
		{"Authorization", "Bearer ${GH_TOKEN}", false},
		{"API_KEY", "${env:API_KEY}", false},
		{"API_KEY", "", false},
		{"API_KEY", "${A}${B}", false},
		{"API_KEY", "${A}tail", true},
	}
	for _, tt := range tests {
		if got := LooksSecret(tt.key, tt.value); got != tt.want {
			t.Errorf("LooksSecret(%q, %q) = %v, want %v", tt.key, tt.value, got, tt.want)
		}
	}
}

func TestSecretArg(t *testing.T) {
	tests := []struct {
		args []string
		i    int
		want bool
	}{
		{[]string{"--api-key=abc"}, 0, true},
		{[]string{"--token", "abc"}, 1, true},
		{[]string{"serve", "ghp_" + "abcdefghijklmnopqrstuvwxyz0123"}, 1, true},
		{[]string{"--port", "8080"}, 1, false},
		{[]string{"--key-file", "/k.pem"}, 1, false},
		{[]string{"-y", "@modelcontextprotocol/server-filesystem"}, 1, false},
		{[]string{"--token=${TOKEN}"}, 0, false},
		{[]string{"--token"}, 0, false},
	}
	for _, tt := range tests {
		if got := secretArg(tt.args, tt.i); got != tt.want {
			t.Errorf("secretArg(%q, %d) = %v, want %v", tt.args, tt.i, got, tt.want)
		}
	}
}

func TestSecretVar(t *testing.T) {
	for _, tt := range [][3]string{
		{"fs", "Authorization", "MCP_FS_AUTHORIZATION"},
		{"my.srv-1", "X-API-Key", "MCP_MY_SRV_1_X_API_KEY"},
		{"9lives", "token", "MCP_9LIVES_TOKEN"},
	} {
		if got := SecretVar(tt[0], tt[1]); got != tt[2] {
			t.Errorf("SecretVar(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
}

func TestServerSecrets(t *testing.T) {
	s := Server{URL: "https://x/mcp", Headers: []Pair{{"Authorization", "Bearer abcdefghij"}, {"X-Trace", "1"}}}
	secs, err := s.Secrets("docs")
	if err != nil || len(secs) != 1 || secs[0].Var != "MCP_DOCS_AUTHORIZATION" || secs[0].Value != "Bearer abcdefghij" {
		t.Fatalf("Secrets = %+v, %v", secs, err)
	}
	s.UseVars(secs)
	if s.Headers[0].Value != "${MCP_DOCS_AUTHORIZATION}" || s.Headers[1].Value != "1" {
		t.Errorf("after UseVars: %+v", s.Headers)
	}
	clash := Server{Command: "x", Env: []Pair{{"API_KEY", "a"}, {"api_key", "b"}}}
	if _, err := clash.Secrets("s"); err == nil {
		t.Error("two keys sharing MCP_S_API_KEY were accepted")
	}
}
