package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// "Add to Hermes" links (upstream's desktop mcp-deeplink):
//
//	hermes://mcp/install?name=NAME&config=BASE64URL(JSON of one server)
//
// A link comes from a web page, so it is read strictly and never carries a secret;
// parsing one adds nothing (the CLI shows it and asks).

// MaxLinkConfig bounds the config parameter as it appears in the link (upstream: 32 KB).
const MaxLinkConfig = 32 << 10

var (
	// linkChars are the bytes a link may hold before decoding: URL-safe ones plus
	// standard base64's '+', '/' and '='.
	linkChars = lazyre.New(`^[A-Za-z0-9:/?&=%._~+-]+$`)

	// linkKeys are the server keys of upstream's reference a link may set.
	linkKeys = []string{
		"command", "args", "env", "cwd", "url", "headers", "transport", "auth", "oauth", "ssl_verify",
		"identity_header", "enabled", "timeout", "connect_timeout", "keepalive_interval",
		"idle_timeout_seconds", "max_lifetime_seconds", "lifecycle", "supports_parallel_tool_calls",
		"protocol", "skip_preflight", "tools", "sampling", "elicitation", "trust",
	}
)

// Link is a validated MCP install link.
type Link struct {
	Scheme string // hermes or hermes-dev
	Name   string
	Entry  Entry // the server, keys in the link's order
	Raw    string
}

// LinkError is a refused link, meant for the user as is.
type LinkError struct{ Msg string }

func (e *LinkError) Error() string { return e.Msg }

func refuse(format string, args ...any) error {
	return &LinkError{Msg: "Refusing this link: " + fmt.Sprintf(format, args...)}
}

// IsLink reports whether raw is a hermes:// or hermes-dev:// link of kind mcp, so
// that `hermes open-url` hands it here rather than to the plugin links.
func IsLink(raw string) bool {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	if s := strings.ToLower(scheme); s != "hermes" && s != "hermes-dev" {
		return false
	}
	kind := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		kind = rest[:i]
	}
	return strings.EqualFold(kind, "mcp")
}

// ParseLink validates an MCP install link: the form, the name, the config's
// encoding and shape, and that it carries no secret. Every refusal says why.
func ParseLink(raw string) (*Link, error) {
	if len(raw) > MaxLinkConfig+1024 {
		return nil, refuse("it is %d bytes long; its config may be at most 32 KiB", len(raw))
	}
	if !linkChars.MatchString(raw) {
		return nil, refuse("it contains characters an MCP install link never has (spaces, quotes, shell or control characters)")
	}
	if !IsLink(raw) {
		return nil, refuse("it is not a hermes://mcp/ link")
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	path, query, _ := strings.Cut(rest, "?")
	_, action, _ := strings.Cut(path, "/")
	if strings.TrimSuffix(action, "/") != "install" {
		return nil, refuse("%s://mcp/%s is not a known action (only mcp/install)", strings.ToLower(scheme), action)
	}
	params, err := linkParams(query)
	if err != nil {
		return nil, err
	}
	name, ok := params["name"]
	if !ok {
		return nil, refuse("it names no server (add name=NAME)")
	}
	if err := CheckName(name); err != nil {
		return nil, refuse("%v", err)
	}
	payload, ok := params["config"]
	if !ok {
		return nil, refuse("it has no config (config=BASE64URL of the server's JSON)")
	}
	e, err := DecodeLinkConfig(payload)
	if err != nil {
		return nil, err
	}
	return &Link{Scheme: strings.ToLower(scheme), Name: name, Entry: e, Raw: raw}, nil
}

// linkParams decodes name= and config=, each once. '+' stays '+' (standard
// base64), so values are path-unescaped, not form-unescaped.
func linkParams(q string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(q, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, refuse("parameter %q is not valid percent-encoding", k)
		}
		if key != "name" && key != "config" {
			return nil, refuse("unknown parameter %q (an MCP install link takes name and config)", key)
		}
		if _, dup := out[key]; dup {
			return nil, refuse("parameter %s is given twice", key)
		}
		val, err := url.PathUnescape(v)
		if err != nil {
			return nil, refuse("the value of %s is not valid percent-encoding", key)
		}
		out[key] = val
	}
	return out, nil
}

// DecodeLinkConfig reads a link's config parameter: base64url (or standard base64,
// padded or not) of one JSON object, then checks it as a server a link may add.
func DecodeLinkConfig(payload string) (Entry, error) {
	if len(payload) > MaxLinkConfig {
		return nil, refuse("its config is %d bytes; at most %d (32 KiB) are accepted", len(payload), MaxLinkConfig)
	}
	p := strings.TrimRight(payload, "=")
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(p); err != nil {
			return nil, refuse("its config is not base64url (nor standard base64): %v", err)
		}
	}
	if !utf8.Valid(b) {
		return nil, refuse("its config does not decode to UTF-8 text (JSON expected)")
	}
	e, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	if err := checkLinkEntry(e); err != nil {
		return nil, err
	}
	return e, nil
}

// decodeObject reads one JSON object, keeping its keys' order; a repeated key
// is refused (the review would show one value and a reader might take the other).
func decodeObject(b []byte) (Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, refuse("its config is not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, refuse("its config is JSON but not an object; it must be one server's settings, such as {\"url\": \"https://…\"} or {\"command\": \"npx\", \"args\": […]}")
	}
	var e Entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, refuse("its config is not JSON: %v", err)
		}
		key := tok.(string) // inside an object the decoder yields only string keys here
		if _, dup := e.Get(key); dup {
			return nil, refuse("its config gives %q twice", key)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, refuse("its config is not JSON: %v", err)
		}
		e = append(e, Field{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, refuse("its config is not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse("its config has more after the JSON object")
	}
	return e, nil
}

// checkLinkEntry holds a link's server to upstream's rules (a string url,
// http/https only, or a string command; args strings) and to ours: no secrets,
// no client certificates, only known keys.
func checkLinkEntry(e Entry) error {
	for _, f := range e {
		if !slices.Contains(linkKeys, f.Key) {
			if f.Key == "client_cert" || f.Key == "client_key" {
				return refuse("it sets %s: a link may not choose which of your certificates a server sees; add it by hand in config.yaml", f.Key)
			}
			return refuse("its config has an unknown key %q (known: %s)", f.Key, strings.Join(linkKeys, ", "))
		}
	}
	u, hasURL := e.Get("url")
	c, hasCmd := e.Get("command")
	switch {
	case hasURL && hasCmd:
		return refuse("its config has both url and command; a server is either HTTP (url) or a local program (command)")
	case !hasURL && !hasCmd:
		return refuse("its config has neither url nor command")
	case hasURL:
		s, ok := u.(string)
		if !ok {
			return refuse("its url is not a string")
		}
		if err := checkLinkURL(s); err != nil {
			return err
		}
		for _, k := range []string{"args", "env", "cwd"} {
			if _, ok := e.Get(k); ok {
				return refuse("it sets %s, which only a command (stdio) server has", k)
			}
		}
	default:
		s, ok := c.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return refuse("its command is not a non-empty string")
		}
		if _, ok := e.Get("headers"); ok {
			return refuse("it sets headers, which only a url (HTTP) server has")
		}
	}
	var args []string
	if a, ok := e.Get("args"); ok {
		list, ok := a.([]any)
		if !ok {
			return refuse("its args is not a list of strings")
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return refuse("its args is not a list of strings (%s is not a string)", kindName(x))
			}
			args = append(args, s)
		}
	}
	for i := range args {
		if secretArg(args, i) {
			return refuse("argument %q looks like a secret, and a link must not carry secrets: add the server, then give the secret with `hermes mcp add NAME --replace --env KEY=VALUE -- …` (stored in .env) and refer to it as ${KEY}", redactArg(args[i]))
		}
	}
	for _, k := range []string{"env", "headers"} {
		if err := checkLinkMap(e, k); err != nil {
			return err
		}
	}
	for _, k := range []string{"cwd", "transport", "trust", "protocol", "auth"} {
		if v, ok := e.Get(k); ok {
			if _, ok := v.(string); !ok {
				return refuse("its %s is not a string", k)
			}
		}
	}
	if ih, ok := e.Get("identity_header"); ok {
		m, _ := ih.(map[string]any)
		name, _ := m["name"].(string)
		if v, ok := m["value"].(string); ok && LooksSecret(name, v) {
			return refuse("its identity_header carries a secret, and a link must not carry secrets: add it to config.yaml by hand with ${VAR} and the value in .env")
		}
	}
	return checkNoSecrets("", e.Map())
}

func checkLinkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refuse("its url %q is not an http:// or https:// URL with a host", s)
	}
	if u.User != nil {
		return refuse("its url has a user name or password in it, and a link must not carry secrets: add the server, then give the credential with `hermes mcp add NAME --replace --url URL --header Authorization=…` (stored in .env)")
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if LooksSecret(k, v) {
				return refuse("its url's query parameter %s looks like a secret, and a link must not carry secrets: add the server, then give it with `hermes mcp add NAME --replace --url URL --header KEY=VALUE` (stored in .env)", k)
			}
		}
	}
	return nil
}

func checkLinkMap(e Entry, key string) error {
	v, ok := e.Get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return refuse("its %s is not an object of strings", key)
	}
	flag := map[string]string{"env": "--env", "headers": "--header"}[key]
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return refuse("its %s.%s is not a string", key, k)
		}
		if LooksSecret(k, s) {
			return refuse("its %s.%s looks like a secret, and a link must not carry secrets: add the server without it, then give it with `hermes mcp add NAME --replace %s %s=VALUE …` (stored in .env)", key, k, flag, k)
		}
	}
	return nil
}

// checkNoSecrets walks everything else a link sets (oauth, sampling, tools…):
// no secret-named string, no credential-shaped one.
func checkNoSecrets(path string, v any) error {
	switch x := v.(type) {
	case string:
		if SecretValue(strings.TrimSpace(refRE.ReplaceAllString(x, ""))) {
			return refuse("its config holds a credential at %s, and a link must not carry secrets", strings.TrimPrefix(path, "."))
		}
	case []any:
		for i, e := range x {
			if err := checkNoSecrets(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && LooksSecret(k, s) {
				return refuse("its config holds a secret at %s.%s, and a link must not carry secrets: add it to config.yaml by hand as ${VAR} with the value in .env", strings.TrimPrefix(path, "."), k)
			}
			if err := checkNoSecrets(path+"."+k, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// PrettyJSON is the entry as indented JSON in its keys' order, for the review.
// It is JSON's escaping only: a terminal needs termsafe on top.
func (e Entry) PrettyJSON() string {
	var b strings.Builder
	b.WriteString("{\n")
	for i, f := range e {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		k, _ := json.Marshal(f.Key)
		_ = enc.Encode(f.Value) // values came from JSON: they encode
		b.WriteString("  " + string(k) + ": " + strings.TrimSuffix(buf.String(), "\n"))
		if i < len(e)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}")
	return b.String()
}

// CommandLine is a stdio entry's command and arguments as a shell would read
// them, or "" for an HTTP one.
func (e Entry) CommandLine() string {
	c, ok := e.Get("command")
	if !ok {
		return ""
	}
	s, _ := c.(string)
	parts := []string{shellQuote(s)}
	if a, ok := e.Get("args"); ok {
		list, _ := a.([]any)
		for _, x := range list {
			if s, ok := x.(string); ok {
				parts = append(parts, shellQuote(s))
			}
		}
	}
	return strings.Join(parts, " ")
}

var shellBare = lazyre.New(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellBare.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
