package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestParseLink(t *testing.T) {
	const fs = `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}`
	link := func(name, cfg string) string { return "hermes://mcp/install?name=" + name + "&config=" + cfg }
	ok := []struct {
		name, raw, wantName, wantCmd string
	}{
		{"base64url", link("fs", b64url(fs)), "fs", "npx -y @modelcontextprotocol/server-filesystem /tmp"},
		{"padded standard base64", link("fs", base64.StdEncoding.EncodeToString([]byte(`{"url":"https://h/mcp?x=>>>"}`))), "fs", ""},
		{"percent-encoded padding", link("a.b_c-1", strings.ReplaceAll(base64.URLEncoding.EncodeToString([]byte(`{"url":"http://127.0.0.1:3001/mcp"}`)), "=", "%3D")), "a.b_c-1", ""},
		{"dev scheme, trailing slash", "hermes-dev://mcp/install/?config=" + b64url(fs) + "&name=x", "x", "npx -y @modelcontextprotocol/server-filesystem /tmp"},
		{"reference in a header", link("h", b64url(`{"url":"https://h/mcp","headers":{"Authorization":"Bearer ${MY_TOKEN}"}}`)), "h", ""},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLink(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if l.Name != tt.wantName || l.Entry.CommandLine() != tt.wantCmd {
				t.Errorf("got %q %q", l.Name, l.Entry.CommandLine())
			}
		})
	}
	if !strings.Contains(base64.StdEncoding.EncodeToString([]byte(`{"url":"https://h/mcp?x=>>>"}`)), "+") {
		t.Fatal("the standard-base64 case must contain a '+'")
	}

	bad := []struct {
		name, raw, want string
	}{
		{"bad base64", link("fs", "!!!notbase64"), "characters an MCP install link never has"},
		{"bad base64 alphabet", link("fs", "abc-def+ghi"), "not base64url (nor standard base64)"},
		{"truncated base64", link("fs", "e"), "not base64url"},
		{"not JSON", link("fs", b64url("command: npx")), "its config is not JSON"},
		{"broken JSON", link("fs", b64url(`{"command":"npx"`)), "its config is not JSON"},
		{"JSON not an object", link("fs", b64url(`["npx"]`)), "JSON but not an object"},
		{"JSON string", link("fs", b64url(`"npx"`)), "JSON but not an object"},
		{"trailing data", link("fs", b64url(`{"command":"npx"} {}`)), "more after the JSON object"},
		{"not UTF-8", link("fs", b64url("{\"command\":\"\xff\"}")), "UTF-8"},
		{"duplicate key", link("fs", b64url(`{"url":"https://a/","url":"https://b/"}`)), `gives "url" twice`},
		{"both url and command", link("fs", b64url(`{"url":"https://h/","command":"npx"}`)), "both url and command"},
		{"neither", link("fs", b64url(`{"args":["x"]}`)), "neither url nor command"},
		{"ftp url", link("fs", b64url(`{"url":"ftp://h/mcp"}`)), "not an http:// or https:// URL"},
		{"file url", link("fs", b64url(`{"url":"file:///etc/passwd"}`)), "not an http:// or https:// URL"},
		{"url not a string", link("fs", b64url(`{"url":["https://h/"]}`)), "url is not a string"},
		{"command not a string", link("fs", b64url(`{"command":["npx"]}`)), "command is not a non-empty string"},
		{"empty command", link("fs", b64url(`{"command":"  "}`)), "command is not a non-empty string"},
		{"args not a list", link("fs", b64url(`{"command":"npx","args":"-y x"}`)), "args is not a list of strings"},
		{"args not strings", link("fs", b64url(`{"command":"npx","args":["-y",1]}`)), "a number is not a string"},
		{"env not strings", link("fs", b64url(`{"command":"npx","env":{"A":1}}`)), "env.A is not a string"},
		{"headers for stdio", link("fs", b64url(`{"command":"npx","headers":{"A":"b"}}`)), "headers, which only a url"},
		{"args for http", link("fs", b64url(`{"url":"https://h/","args":["x"]}`)), "args, which only a command"},
		{"unknown key", link("fs", b64url(`{"command":"npx","comand":"rm"}`)), `unknown key "comand"`},
		{"client key", link("fs", b64url(`{"url":"https://h/","client_key":"~/.ssh/id_rsa"}`)), "which of your certificates"},
		{"secret header", link("fs", b64url(`{"url":"https://h/","headers":{"Authorization":"Bearer abcdefghijkl"}}`)), "headers.Authorization looks like a secret, and a link must not carry secrets: add the server without it, then give it with `hermes mcp add NAME --replace --header Authorization=VALUE"},
		{"secret env", link("fs", b64url(`{"command":"npx","env":{"GITHUB_TOKEN":"x"}}`)), "env.GITHUB_TOKEN looks like a secret"},
		{"credential-shaped env value", link("fs", b64url(`{"command":"npx","env":{"OPTS":"sk-abcdefghijklmnopqrst"}}`)), "env.OPTS looks like a secret"},
		{"secret arg", link("fs", b64url(`{"command":"npx","args":["--api-key=abc"]}`)), `argument "--api-key=…" looks like a secret`},
		{"secret in oauth", link("fs", b64url(`{"url":"https://h/","oauth":{"client_secret":"s3cr3t"}}`)), "secret at oauth.client_secret"},
		{"secret identity header", link("fs", b64url(`{"url":"https://h/","identity_header":{"name":"X-Api-Key","value":"v"}}`)), "identity_header carries a secret"},
		{"password in url", link("fs", b64url(`{"url":"https://u:p@h/"}`)), "user name or password"},
		{"token in query", link("fs", b64url(`{"url":"https://h/mcp?api_key=abc"}`)), "query parameter api_key looks like a secret"},
		{"oversize payload", link("fs", b64url(`{"command":"npx","cwd":"`+strings.Repeat("a", MaxLinkConfig)+`"}`)), "bytes long; its config may be at most 32 KiB"},
		{"oversize config parameter", "hermes://mcp/install?name=fs&config=" + strings.Repeat("A", MaxLinkConfig+1), "at most 32768 (32 KiB)"},
		{"bad name", link("a%20b", b64url(fs)), `server name "a b" is not valid`},
		{"long name", link(strings.Repeat("n", 65), b64url(fs)), "is not valid"},
		{"no name", "hermes://mcp/install?config=" + b64url(fs), "names no server"},
		{"no config", "hermes://mcp/install?name=fs", "has no config"},
		{"unknown parameter", link("fs", b64url(fs)) + "&enable=1", `unknown parameter "enable"`},
		{"repeated name", link("fs", b64url(fs)) + "&name=other", "parameter name is given twice"},
		{"other action", "hermes://mcp/remove?name=fs", "not a known action (only mcp/install)"},
		{"control character", "hermes://mcp/install?name=fs\x1b&config=e30", "characters an MCP install link never has"},
		{"plugin link", "hermes://plugin/install?repo=o/r", "not a hermes://mcp/ link"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLink(tt.raw)
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if !strings.HasPrefix(err.Error(), "Refusing this link: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestIsLink(t *testing.T) {
	for raw, want := range map[string]bool{
		"hermes://mcp/install?name=a": true, "HERMES-DEV://MCP/install": true, "hermes://mcp?x": true,
		"hermes://plugin/install?repo=o/r": false, "https://mcp/install": false, "mcp/install": false, "hermes://mcpx/install": false,
	} {
		if got := IsLink(raw); got != want {
			t.Errorf("IsLink(%q) = %v", raw, got)
		}
	}
}

// The review text keeps hostile characters as JSON escapes (termsafe then takes
// care of what JSON leaves, such as U+202E), in the link's key order.
func TestPrettyJSONAndCommandLine(t *testing.T) {
	l, err := ParseLink("hermes://mcp/install?name=x&config=" + b64url(`{"command":"run me","args":["a b","it's","\u001b[2J"],"env":{"Z":"1","A":"2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"command\": \"run me\",\n  \"args\": [\n    \"a b\",\n    \"it's\",\n    \"\\u001b[2J\"\n  ],\n  \"env\": {\n    \"A\": \"2\",\n    \"Z\": \"1\"\n  }\n}"
	if got := l.Entry.PrettyJSON(); got != want {
		t.Errorf("PrettyJSON:\n%s\nwant:\n%s", got, want)
	}
	if got, want := l.Entry.CommandLine(), "'run me' 'a b' 'it'\\''s' '\x1b[2J'"; got != want {
		t.Errorf("CommandLine = %q, want %q", got, want)
	}
}
