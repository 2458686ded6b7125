package redact

import "regexp"

// rule is one secret shape. The matcher joins every rule into one regexp; a
// rule also names the literals (anchors) one of which any match contains, so
// text holding none of them is never given to the regexp at all.
type rule struct {
	expr    string
	anchors []string // a match contains one of these
	fold    bool     // anchors are lower case and searched case-insensitively
	secret  int      // the rule's own capture group that is masked; 0 = the whole match
	block   bool     // may span lines (a private key block)
	label   string   // where the rule came from, for errors and tests
	// replace, when set, is the whole replacement of the secret (else maskToken).
	replace string
}

// vendorPrefixes are API key and token shapes of the common providers: a literal
// prefix and a run of token characters. The prefix is the anchor.
var vendorPrefixes = []struct{ prefix, body string }{
	{"sk-", `[A-Za-z0-9_-](?:\.?[A-Za-z0-9_-]){9,}`}, // OpenAI, Anthropic (sk-ant-), OpenRouter (sk-or-), ...
	{"ghp_", `[A-Za-z0-9]{10,}`},                     // GitHub classic PAT
	{"github_pat_", `[A-Za-z0-9_]{10,}`},             // GitHub fine-grained PAT
	{"gho_", `[A-Za-z0-9]{10,}`},
	{"ghu_", `[A-Za-z0-9]{10,}`},
	{"ghs_", `[A-Za-z0-9]{10,}`},
	{"ghr_", `[A-Za-z0-9]{10,}`},
	{"glpat-", `[A-Za-z0-9_-]{10,}`}, // GitLab PAT
	{"xoxb-", `[A-Za-z0-9-]{10,}`},   // Slack tokens
	{"xoxa-", `[A-Za-z0-9-]{10,}`},
	{"xoxp-", `[A-Za-z0-9-]{10,}`},
	{"xoxr-", `[A-Za-z0-9-]{10,}`},
	{"xoxs-", `[A-Za-z0-9-]{10,}`},
	{"xapp-", `[0-9]+-[A-Za-z0-9-]{10,}`},
	{"AIza", `[A-Za-z0-9_-]{30,}`},   // Google API key
	{"AKIA", `[A-Z0-9]{16}`},         // AWS access key id
	{"sk_live_", `[A-Za-z0-9]{10,}`}, // Stripe
	{"sk_test_", `[A-Za-z0-9]{10,}`}, // Stripe
	{"rk_live_", `[A-Za-z0-9]{10,}`}, // Stripe restricted
	{"SG.", `[A-Za-z0-9_-]{10,}`},    // SendGrid
	{"hf_", `[A-Za-z0-9]{10,}`},      // Hugging Face
	{"r8_", `[A-Za-z0-9]{10,}`},      // Replicate
	{"npm_", `[A-Za-z0-9]{10,}`},     // npm
	{"pypi-", `[A-Za-z0-9_-]{10,}`},  // PyPI
	{"dop_v1_", `[A-Za-z0-9]{10,}`},  // DigitalOcean
	{"gsk_", `[A-Za-z0-9]{10,}`},     // Groq
	{"xai-", `[A-Za-z0-9]{30,}`},     // xAI
	{"pplx-", `[A-Za-z0-9]{10,}`},    // Perplexity
	{"tvly-", `[A-Za-z0-9]{10,}`},    // Tavily
	{"fw_", `[A-Za-z0-9]{30,}`},      // Fireworks
	{"ntn_", `[A-Za-z0-9]{10,}`},     // Notion
	// JWTs ("{" in base64). Unlike upstream, at least header.payload: a lone
	// base64 JSON blob is also how hermes:// links carry their config.
	{"eyJ", `[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_=-]{4,})?`},
}

// builtinRules are the secret shapes hermes always knows, before any plugin's.
func builtinRules() []rule {
	rules := make([]rule, 0, len(vendorPrefixes)+6)
	for _, v := range vendorPrefixes {
		rules = append(rules, rule{expr: regexp.QuoteMeta(v.prefix) + v.body, anchors: []string{v.prefix}, label: "builtin " + v.prefix})
	}
	return append(rules,
		// A private key block, whole: nothing of it is worth keeping.
		rule{
			expr:    `-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----`,
			anchors: []string{"-----BEGIN"}, block: true, label: "builtin private key block",
			replace: "[REDACTED PRIVATE KEY]",
		},
		// Authorization headers and bare bearer tokens: the header and scheme stay.
		rule{
			expr:    `(?i:(?:proxy-)?authorization:[ \t]*(?:[a-z][a-z0-9._+-]*[ \t]+)?|bearer[ \t]+)([A-Za-z0-9._~+/=-]{8,})`,
			anchors: []string{"authorization", "bearer"}, fold: true, secret: 1, label: "builtin authorization",
		},
		// .env-style assignments whose name says secret: API_KEY=..., export GITHUB_TOKEN="...".
		rule{
			expr:    `\b[A-Z0-9_]*(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)[A-Z0-9_]*[ \t]*=[ \t]*['"]?([^\s'"]+)`,
			anchors: []string{"KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH"}, secret: 1, label: "builtin env assignment",
		},
		// JSON fields: "api_key": "...", "password": "...".
		rule{
			expr:    `(?i:"(?:api_?key|apikey|token|access_token|refresh_token|auth_token|secret|client_secret|password)"[ \t]*:[ \t]*")([^"]+)"`,
			anchors: []string{`key"`, `token"`, `secret"`, `password"`}, fold: true, secret: 1, label: "builtin json field",
		},
		// Passwords in database URLs: postgres://user:PASSWORD@host.
		rule{
			expr:    `(?i:(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s/@]+:)([^@\s]+)@`,
			anchors: []string{"://"}, secret: 1, label: "builtin connection string",
		},
	)
}

// maskToken is upstream's mask: a short secret is hidden whole; a long one
// keeps its first 6 and last 4 characters, so a user can tell which key it was.
func maskToken(t string) string {
	if len(t) < 18 {
		return "***"
	}
	return t[:6] + "..." + t[len(t)-4:]
}
