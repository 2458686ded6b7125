package redact

import (
	"strings"
	"testing"
)

// Fake secrets are built here from pieces, so no committed line looks like a key
// to a secret scanner.
func fake(prefix string, n int) string {
	const alnum = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alnum[i%len(alnum)])
	}
	return b.String()
}

func TestBuiltinRules(t *testing.T) {
	openai := fake("sk"+"-proj-", 40)
	github := fake("gh"+"p_", 36)
	aws := "AK" + "IA" + strings.Repeat("Q7", 8)
	slack := fake("xo"+"xb-", 30)
	pem := "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + fake("", 40) + "\n-----END RSA PRIVATE KEY-----"
	bearer := fake("", 32)
	r := New(nil)
	tests := []struct {
		name, in, want string
		gone           []string // substrings that must not survive
	}{
		{"openai key keeps 6+4", "key is " + openai + " ok", "key is " + openai[:6] + "..." + openai[len(openai)-4:] + " ok", []string{openai}},
		{"github pat", "token " + github, "", []string{github}},
		{"aws id", "id " + aws, "id " + aws[:6] + "..." + aws[len(aws)-4:], []string{aws}},
		{"short value masks whole", "GH_TOKEN=abc123", "GH_TOKEN=***", nil},
		{"slack", slack + ".", "", []string{slack}},
		{"private key block", "before\n" + pem + "\nafter", "before\n[REDACTED PRIVATE KEY]\nafter", []string{"MIIEow"}},
		{"authorization header", "Authorization: Bearer " + bearer, "Authorization: Bearer " + bearer[:6] + "..." + bearer[len(bearer)-4:], []string{bearer}},
		{"bare bearer lower case", "curl -H 'bearer " + bearer + "'", "", []string{bearer}},
		{"env assignment", "export OPENAI_API_KEY=\"hunter2hunter2\"\nHOME=/root", "export OPENAI_API_KEY=\"***\"\nHOME=/root", nil},
		{"env password", "DB_PASSWORD=swordfish", "DB_PASSWORD=***", nil},
		{"json field", `{"api_key": "abcdefghijklmnopqrstuvwxyz", "user": "bob"}`, `{"api_key": "abcdef...wxyz", "user": "bob"}`, nil},
		{"db url password", "postgres://app:s3cretpw@db:5432/x", "postgres://app:***@db:5432/x", nil},
		{"nothing secret", "KEYBOARD layout is us; sk- is a prefix", "KEYBOARD layout is us; sk- is a prefix", nil},
		{"idempotent", openai[:6] + "..." + openai[len(openai)-4:], openai[:6] + "..." + openai[len(openai)-4:], nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if tt.want != "" && got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, g := range tt.gone {
				if strings.Contains(got, g) {
					t.Errorf("String(%q) = %q still holds the secret", tt.in, got)
				}
			}
			if got == tt.in && len(tt.gone) > 0 {
				t.Errorf("nothing redacted in %q", tt.in)
			}
		})
	}
}

func TestCheckRefuses(t *testing.T) {
	tests := []struct {
		pattern, wantErr string
	}{
		{"acme_[A-Za-z0-9]{20,}", ""},
		{"(?i)acme_[a-z0-9]{8,}", ""},
		{"AC(?:x|y)[0-9]+", ""},
		{".*", "at least 2 literal characters"},
		{`\w+`, "at least 2 literal characters"},
		{"a[0-9]+", "at least 2 literal characters"},
		{"ab|.*", "top-level alternation"},
		{"ab(", "does not compile"},
		{"ab(?=x)", "lookarounds"},
		{"", "empty"},
		{"   ", "empty"},
		{"ab" + strings.Repeat("x", MaxPatternBytes), "limit is"},
	}
	for _, tt := range tests {
		err := Check(tt.pattern)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Check(%q) = %v, want accepted", tt.pattern, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Check(%q) = %v, want an error with %q", tt.pattern, err, tt.wantErr)
		}
	}
}

func TestPluginPatterns(t *testing.T) {
	secret := fake("acme"+"_", 24)
	folded := fake("ZETA"+"-", 12)
	r := New([]string{"acme_[A-Za-z0-9]{20,}", "(?i)zeta-[a-z0-9]{10,}", ".*"})
	got := r.String("a " + secret + " b " + folded + " c")
	if strings.Contains(got, secret) || strings.Contains(got, folded) {
		t.Fatalf("plugin secrets survived: %q", got)
	}
	if !strings.HasPrefix(got, "a acme_a") || !strings.HasSuffix(got, " c") {
		t.Fatalf("surrounding text changed: %q", got)
	}
	// ".*" was refused: the rest of the text is intact.
	if plain := r.String("just words"); plain != "just words" {
		t.Fatalf("a refused pattern was applied: %q", plain)
	}
}

func TestLive(t *testing.T) {
	var l Live
	key := fake("gh"+"p_", 30)
	if got := l.String(key); strings.Contains(got, key) {
		t.Fatalf("zero Live did not redact built-ins: %q", got)
	}
	secret := fake("acme"+"_", 24)
	l.Set(New([]string{"acme_[A-Za-z0-9]{20,}"}))
	if got := l.String(secret); strings.Contains(got, secret) {
		t.Fatalf("plugin pattern not in force: %q", got)
	}
	l.Disable(true)
	if got := l.String(secret); got != secret {
		t.Fatalf("disabled Live changed text: %q", got)
	}
	var nl *Live
	if nl.String(key) != key {
		t.Fatal("nil Live changed text")
	}
}

func TestMultipleSecretsAcrossLines(t *testing.T) {
	a, b := fake("gh"+"p_", 30), fake("sk"+"-", 30)
	in := strings.Repeat("plain line\n", 50) + "x " + a + " y " + b + "\n" + strings.Repeat("more\n", 50) + "TOKEN=" + a
	got := New(nil).String(in)
	if strings.Contains(got, a) || strings.Contains(got, b) {
		t.Fatalf("secrets survived")
	}
	if strings.Count(got, "plain line\n") != 50 || !strings.HasSuffix(got, "TOKEN="+a[:6]+"..."+a[len(a)-4:]) {
		t.Fatalf("text around secrets changed: %q", got[len(got)-40:])
	}
}

// A hermes:// link carries its config as one base64 JSON blob ("eyJ..."): it is
// not a JWT and stays; a header.payload.signature token goes.
func TestJWTNotBase64Blob(t *testing.T) {
	blob := "eyJjb21tYW5kIjoibnB4IiwiYXJncyI6WyIteSJdfQ"
	jwt := "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "c2lnbmF0dXJlLXBhcnQ"
	r := New(nil)
	if got := r.String("hermes://mcp/install?name=fs&config=" + blob); !strings.Contains(got, blob) {
		t.Fatalf("link config masked: %q", got)
	}
	if got := r.String("token " + jwt); strings.Contains(got, jwt) {
		t.Fatalf("JWT survived: %q", got)
	}
}
