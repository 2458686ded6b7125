package mcp

import (
	"strings"
	"unicode"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// What counts as a secret. A false positive only moves a value to .env; a false
// negative writes a credential into a file people share, so names err wide and
// values are matched by the shapes credentials really have.
var (
	// secretWords are the last words of names (split at '_', '-', '.', camelCase)
	// whose value is a secret: X-API-Key, apiKey, GITHUB_TOKEN, Authorization.
	secretWords = map[string]bool{
		"authorization": true, "token": true, "key": true, "secret": true, "password": true,
		"passwd": true, "pwd": true, "apikey": true, "credential": true, "credentials": true,
		"cookie": true, "pat": true, "bearer": true,
	}
	// secretSuffixes catch parts glued together: accesstoken, clientsecret, dbpassword.
	// Not "key" alone: keyboard and monkey are not secrets.
	secretSuffixes = []string{"token", "secret", "password", "passwd", "apikey", "accesskey", "secretkey", "privatekey"}

	// secretValueRE matches credentials by shape wherever they appear: an HTTP
	// authorization value, GitHub, OpenAI/Anthropic-style, Slack, GitLab and AWS keys,
	// a PEM private key.
	secretValueRE = lazyre.New(`(?i:^(?:bearer|basic|token)\s+\S{8,})` +
		`|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{16,}|xox[abeprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16})\b` +
		`|-----BEGIN [A-Z ]*PRIVATE KEY-----`)
	// schemeOnlyRE is what is left of "Bearer ${VAR}" once the reference is taken out.
	schemeOnlyRE = lazyre.New(`(?i)^(?:bearer|basic|token)?$`)
)

// SecretName reports whether a header or variable called name holds a secret. The
// last word decides (a trailing number aside): API_KEY and X-Auth-Token do,
// KEY_FILE, TOKEN_URL and PASSWORD_PATH name where a secret is, not the secret.
func SecretName(name string) bool {
	words := nameWords(name)
	for len(words) > 1 && strings.Trim(words[len(words)-1], "0123456789") == "" {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	w := words[len(words)-1]
	if secretWords[w] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// nameWords splits a name into lower-case words at non-alphanumerics and at
// camelCase humps (apiKey → api, key; XAPIKey → xapi, key).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	rs := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush() // apiKey
		case unicode.IsUpper(r) && i > 0 && unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush() // XAPIKey: the K starts a word
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// SecretValue reports whether value has the shape of a credential.
func SecretValue(value string) bool { return secretValueRE.MatchString(value) }

// LooksSecret reports whether the value of a header, variable or parameter called
// key is a secret to keep out of config.yaml. A value that only refers to
// variables ("${TOKEN}", "Bearer ${TOKEN}") holds none: the secret is elsewhere.
func LooksSecret(key, value string) bool {
	rest := strings.TrimSpace(refRE.ReplaceAllString(value, ""))
	if schemeOnlyRE.MatchString(rest) {
		return false
	}
	return SecretName(key) || SecretValue(rest)
}

// secretArg reports whether args[i] of a command line is a secret: a credential by
// shape, --name=value with a secret name, or the value after a --name flag with one.
func secretArg(args []string, i int) bool {
	a := args[i]
	if SecretValue(strings.TrimSpace(refRE.ReplaceAllString(a, ""))) {
		return true
	}
	if strings.HasPrefix(a, "-") {
		if k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok {
			return LooksSecret(k, v)
		}
		return false
	}
	if i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") {
		return LooksSecret(strings.TrimLeft(args[i-1], "-"), a)
	}
	return false
}

// redactArg shows an argument without its secret part, for an error message.
func redactArg(a string) string {
	if k, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
		return k + "=…"
	}
	if len(a) > 6 {
		return a[:4] + "…"
	}
	return "…"
}
