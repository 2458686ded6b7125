// Package mcp is hermes' one MCP client: the user's mcp_servers from
// config.yaml, one lazily started connection per server shared by the model's
// mcp__* tools and every plugin's ctx.call_mcp, with upstream's trust gate,
// circuit breaker and reconnect rules (wave2 §3).
package mcp

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/lazyre"
)

// Defaults (wave2 §3.1, §3.3). The tool-call timeout is 120 s, the shorter of
// upstream's two variants: a hung call holds a model turn, and a server that
// needs longer can say so with `timeout:`.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultConnectTimeout = 60 * time.Second
)

// Trust levels.
const (
	TrustFull      = "full"
	TrustUntrusted = "untrusted"
)

// Server is one validated entry of mcp_servers.
type ServerConfig struct {
	Name           string
	Command        string
	Args           []string
	Env            map[string]string
	Cwd            string
	URL            string
	Headers        map[string]string // secrets: never shown
	Transport      string            // "stdio" or "http"
	Timeout        time.Duration
	ConnectTimeout time.Duration
	Enabled        bool
	Trust          string // TrustFull or TrustUntrusted
	Include        []string
	Exclude        []string
	includeSet     bool
	Resources      bool
	Prompts        bool
}

// Config is what config.yaml says about MCP.
type Config struct {
	Servers  []*ServerConfig // sorted by name
	Warnings []string
}

// Lookup returns the server called name.
func (c *Config) Lookup(name string) (*ServerConfig, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Expander resolves ${VAR} references: the profile's .env first, then the
// process environment.
type Expander struct {
	Dotenv map[string]string
	Env    func(string) string
	Home   string // ${userHome}
	Cwd    string // ${workspaceFolder}
}

var varRE = lazyre.New(`\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*|/)\}`)

// Expand replaces the references in s; an unset variable keeps its literal
// text, as upstream does, and is reported in missing.
func (x Expander) Expand(s string) (out string, missing []string) {
	out = varRE.Get().ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[2]
		if sub[1] == "" {
			switch name {
			case "userHome":
				return x.Home
			case "workspaceFolder":
				return x.Cwd
			case "workspaceFolderBasename":
				return lastElem(x.Cwd)
			case "pathSeparator", "/":
				return "/"
			}
		}
		if v, ok := x.Dotenv[name]; ok {
			return v
		}
		if x.Env != nil {
			if v := x.Env(name); v != "" {
				return v
			}
		}
		missing = append(missing, name)
		return m
	})
	return out, missing
}

func lastElem(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// knownKeys are the server keys hermes acts on; ignoredKeys are upstream's
// keys it accepts without acting on them (warned once, never fatal).
var knownKeys = map[string]bool{
	"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true,
	"transport": true, "timeout": true, "connect_timeout": true, "enabled": true, "trust": true, "tools": true,
}

var ignoredKeys = map[string]bool{
	"auth": true, "oauth": true, "ssl_verify": true, "client_cert": true, "client_key": true,
	"identity_header": true, "keepalive_interval": true, "idle_timeout_seconds": true,
	"max_lifetime_seconds": true, "lifecycle": true, "supports_parallel_tool_calls": true,
	"protocol": true, "skip_preflight": true, "sampling": true, "elicitation": true,
}

// Parse reads mcp_servers (and the seed's mcp.servers; mcp_servers wins on a
// name in both) from config.yaml's tree. A value of the wrong type is an
// error naming the key; what hermes does not support is a warning.
func Parse(tree map[string]any, x Expander) (*Config, error) {
	c := &Config{}
	entries := map[string]any{}
	from := map[string]string{}
	if m, ok := tree["mcp"].(map[string]any); ok && m["servers"] != nil {
		servers, ok := m["servers"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("mcp.servers in config.yaml must be a mapping of server name to settings, not %s", jsonx.KindOfYAML(m["servers"]))
		}
		for k, v := range servers {
			entries[k], from[k] = v, "mcp.servers"
		}
	}
	if raw, ok := tree["mcp_servers"]; ok && raw != nil {
		servers, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("mcp_servers in config.yaml must be a mapping of server name to settings, not %s", jsonx.KindOfYAML(raw))
		}
		for k, v := range servers {
			if from[k] == "mcp.servers" {
				c.Warnings = append(c.Warnings, fmt.Sprintf("MCP server %q is in both mcp_servers and mcp.servers; using mcp_servers", k))
			}
			entries[k], from[k] = v, "mcp_servers"
		}
	}
	names := make([]string, 0, len(entries))
	for k := range entries {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		s, warns, err := parseServer(from[name]+"."+name, name, entries[name], x)
		if err != nil {
			return nil, err
		}
		c.Warnings = append(c.Warnings, warns...)
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

func parseServer(key, name string, raw any, x Expander) (*ServerConfig, []string, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s in config.yaml must be a mapping (command/args or url), not %s", key, jsonx.KindOfYAML(raw))
	}
	s := &ServerConfig{Name: name, Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout, Enabled: true,
		Trust: TrustFull, Resources: true, Prompts: true}
	var warns []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case ignoredKeys[k]:
			warns = append(warns, fmt.Sprintf("%s.%s is not supported by hermes yet; ignored", key, k))
		case !knownKeys[k]:
			warns = append(warns, fmt.Sprintf("%s.%s is not an MCP server setting hermes knows; ignored", key, k))
		}
	}
	expand := func(k, v string) string {
		out, missing := x.Expand(v)
		for _, n := range missing {
			warns = append(warns, fmt.Sprintf("%s.%s uses ${%s}, which is not set in .env or the environment; kept as written", key, k, n))
		}
		return out
	}
	var err error
	str := func(k string) (string, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return "", nil
		}
		sv, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s.%s in config.yaml must be a string, not %s", key, k, jsonx.KindOfYAML(v))
		}
		return expand(k, sv), nil
	}
	if s.Command, err = str("command"); err != nil {
		return nil, nil, err
	}
	if s.Cwd, err = str("cwd"); err != nil {
		return nil, nil, err
	}
	if s.URL, err = str("url"); err != nil {
		return nil, nil, err
	}
	if s.Args, err = parseArgs(key, m["args"], expand); err != nil {
		return nil, nil, err
	}
	if s.Env, err = stringMap(key+".env", m["env"], func(v string) string { return expand("env", v) }); err != nil {
		return nil, nil, err
	}
	if s.Headers, err = stringMap(key+".headers", m["headers"], func(v string) string { return expand("headers", v) }); err != nil {
		return nil, nil, err
	}
	switch {
	case s.Command != "" && s.URL != "":
		return nil, nil, fmt.Errorf("%s in config.yaml has both command and url; keep one (command for a local server, url for a remote one)", key)
	case s.Command != "":
		s.Transport = "stdio"
	case s.URL != "":
		s.Transport = "http"
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return nil, nil, fmt.Errorf("%s.url in config.yaml must start with http:// or https://", key)
		}
	default:
		return nil, nil, fmt.Errorf("%s in config.yaml has neither command nor url; add command (and args) for a local server or url for a remote one", key)
	}
	if t, err := str("transport"); err != nil {
		return nil, nil, err
	} else if t == "sse" {
		warns = append(warns, fmt.Sprintf("%s.transport: sse is not supported by hermes yet; using streamable HTTP", key))
	}
	if s.Timeout, err = seconds(key+".timeout", m["timeout"], DefaultTimeout); err != nil {
		return nil, nil, err
	}
	if s.ConnectTimeout, err = seconds(key+".connect_timeout", m["connect_timeout"], DefaultConnectTimeout); err != nil {
		return nil, nil, err
	}
	if v, ok := m["enabled"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, nil, fmt.Errorf("%s.enabled in config.yaml must be true or false, not %s", key, jsonx.KindOfYAML(v))
		}
		s.Enabled = b
	}
	if v, ok := m["trust"]; ok && v != nil {
		t, _ := v.(string)
		switch strings.ToLower(strings.TrimSpace(t)) {
		case TrustFull:
		case TrustUntrusted:
			s.Trust = TrustUntrusted
		default:
			s.Trust = TrustUntrusted
			warns = append(warns, fmt.Sprintf("%s.trust is %v, not full or untrusted; treating the server as untrusted", key, v))
		}
	}
	if err := parseToolFilter(key, m["tools"], s); err != nil {
		return nil, nil, err
	}
	return s, warns, nil
}

// parseArgs takes a list of strings, or a legacy single string split on spaces.
func parseArgs(key string, v any, expand func(k, v string) string) ([]string, error) {
	switch a := v.(type) {
	case nil:
		return nil, nil
	case string:
		var out []string
		for _, f := range strings.Fields(a) {
			out = append(out, expand("args", f))
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(a))
		for i, x := range a {
			switch y := x.(type) {
			case string:
				out = append(out, expand("args", y))
			case int, float64, bool:
				out = append(out, fmt.Sprint(y))
			default:
				return nil, fmt.Errorf("%s.args[%d] in config.yaml must be a string, not %s", key, i, jsonx.KindOfYAML(x))
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s.args in config.yaml must be a list of strings, not %s", key, jsonx.KindOfYAML(v))
}

func stringMap(key string, v any, expand func(string) string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s in config.yaml must be a mapping of names to strings, not %s", key, jsonx.KindOfYAML(v))
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch y := x.(type) {
		case string:
			out[k] = expand(y)
		case int, float64, bool:
			out[k] = fmt.Sprint(y)
		default:
			return nil, fmt.Errorf("%s.%s in config.yaml must be a string, not %s", key, k, jsonx.KindOfYAML(x))
		}
	}
	return out, nil
}

func seconds(key string, v any, def time.Duration) (time.Duration, error) {
	var f float64
	switch n := v.(type) {
	case nil:
		return def, nil
	case int:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0, fmt.Errorf("%s in config.yaml must be a number of seconds, not %s", key, jsonx.KindOfYAML(v))
	}
	if f <= 0 {
		return 0, fmt.Errorf("%s in config.yaml must be a positive number of seconds, not %v", key, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func parseToolFilter(key string, v any, s *ServerConfig) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s.tools in config.yaml must be a mapping (include, exclude, resources, prompts), not %s", key, jsonx.KindOfYAML(v))
	}
	list := func(k string) ([]string, bool, error) {
		x, ok := m[k]
		if !ok || x == nil {
			return nil, false, nil
		}
		a, ok := x.([]any)
		if !ok {
			return nil, false, fmt.Errorf("%s.tools.%s in config.yaml must be a list of tool names, not %s", key, k, jsonx.KindOfYAML(x))
		}
		out := []string{}
		for _, e := range a {
			str, ok := e.(string)
			if !ok {
				return nil, false, fmt.Errorf("%s.tools.%s in config.yaml must list tool names as strings", key, k)
			}
			out = append(out, str)
		}
		return out, true, nil
	}
	var err error
	if s.Include, s.includeSet, err = list("include"); err != nil {
		return err
	}
	if s.Exclude, _, err = list("exclude"); err != nil {
		return err
	}
	for _, k := range []string{"resources", "prompts"} {
		x, ok := m[k]
		if !ok || x == nil {
			continue
		}
		b, ok := x.(bool)
		if !ok {
			return fmt.Errorf("%s.tools.%s in config.yaml must be true or false, not %s", key, k, jsonx.KindOfYAML(x))
		}
		if k == "resources" {
			s.Resources = b
		} else {
			s.Prompts = b
		}
	}
	return nil
}
