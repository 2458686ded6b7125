// Package mcp is hermes' side of the Model Context Protocol: the user's servers
// under mcp_servers in config.yaml. This file edits that section (what `hermes mcp
// add/remove` write); it never reads the section for running servers.
package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/lazyre"
)

// ServersKey is the top-level key of the servers (upstream's); LegacyServersKey is
// the seed's spelling, mcp.servers, still read and edited in place.
const ServersKey = "mcp_servers"

var legacySegs = []string{"mcp", "servers"}

var (
	nameRE   = lazyre.New(`^[A-Za-z0-9._-]{1,64}$`)
	envKeyRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// headerRE is an HTTP field name (RFC 9110 token).
	headerRE = lazyre.New("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// refRE is a ${VAR} or ${env:VAR} reference, expanded by the client.
	refRE = lazyre.New(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)
)

// CheckName accepts a server name as upstream's links do, for every name hermes writes.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("server name %q is not valid: use 1 to 64 letters, digits, '.', '_' or '-'", name)
	}
	return nil
}

// Field is one key of a server entry; an Entry keeps its keys in the order written.
type Field struct {
	Key   string
	Value any
}

// Entry is one server's configuration, as it is written under mcp_servers.NAME.
type Entry []Field

// Get returns the value of key.
func (e Entry) Get(key string) (any, bool) {
	for _, f := range e {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Map is the entry as the config file decodes it.
func (e Entry) Map() map[string]any {
	m := make(map[string]any, len(e))
	for _, f := range e {
		m[f.Key] = f.Value
	}
	return m
}

// Pair is a K=V given on the command line (--env, --header).
type Pair struct{ Key, Value string }

// ParsePair reads K=V; flag names the option in the error.
func ParsePair(flag, s string) (Pair, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return Pair{}, fmt.Errorf("--%s %q is not KEY=VALUE", flag, s)
	}
	return Pair{Key: k, Value: v}, nil
}

// Server is what `hermes mcp add` was told: a stdio server (Command) or a
// streamable HTTP one (URL).
type Server struct {
	Command        string
	Args           []string
	Env            []Pair
	URL            string
	Headers        []Pair
	Timeout        int // seconds; 0 = the default
	ConnectTimeout int // seconds; 0 = the default
	Trust          string
	Disabled       bool
}

// Check says what is wrong with s, in terms of the command line.
func (s *Server) Check() error {
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New("give the server's command after --, or --url URL for an HTTP server")
	case s.Command != "" && s.URL != "":
		return errors.New("give either a command after -- (stdio) or --url (HTTP), not both")
	case s.URL != "" && len(s.Env) > 0:
		return errors.New("--env sets a stdio server's environment; an HTTP server takes --header")
	case s.Command != "" && len(s.Headers) > 0:
		return errors.New("--header is for HTTP servers (--url); a stdio server takes --env")
	case s.Timeout < 0 || s.ConnectTimeout < 0:
		return errors.New("--timeout and --connect-timeout are whole seconds above 0")
	}
	if s.URL != "" {
		if err := checkURL(s.URL); err != nil {
			return err
		}
	}
	if s.Trust != "" && s.Trust != "full" && s.Trust != "untrusted" {
		return fmt.Errorf("--trust %q: use full or untrusted", s.Trust)
	}
	if err := checkPairs("env", s.Env, envKeyRE, "letters, digits and '_', not starting with a digit"); err != nil {
		return err
	}
	if err := checkPairs("header", s.Headers, headerRE, "letters, digits and -"); err != nil {
		return err
	}
	for i, a := range s.Args {
		if secretArg(s.Args, i) {
			return fmt.Errorf("argument %q looks like a secret, and config.yaml must not hold secrets: pass it with --env NAME=VALUE (stored in .env) and have the server read NAME, or write the argument as '${NAME}' (in single quotes) with NAME set in .env", redactArg(a))
		}
	}
	return nil
}

func checkPairs(flag string, ps []Pair, re *lazyre.Regexp, rule string) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if !re.MatchString(p.Key) {
			return fmt.Errorf("--%s %q: the name may have %s only", flag, p.Key, rule)
		}
		k := p.Key
		if flag == "header" {
			k = strings.ToLower(k) // header names are case-insensitive
		}
		if seen[k] {
			return fmt.Errorf("--%s %s is given twice", flag, p.Key)
		}
		seen[k] = true
		if strings.ContainsAny(p.Value, "\x00\r\n") {
			return fmt.Errorf("--%s %s: the value has a NUL or line break", flag, p.Key)
		}
	}
	return nil
}

// checkURL accepts http and https URLs with a host and no credentials in them.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q is not an http:// or https:// URL with a host", raw)
	}
	if _, ok := u.User.Password(); ok {
		return errors.New("the url has a password in it, and config.yaml must not hold secrets: drop it from the url and pass it as a header (--header Authorization=...), which is stored in .env")
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if LooksSecret(k, v) {
				return fmt.Errorf("the url's query parameter %s looks like a secret, and config.yaml must not hold secrets: pass it as a header (--header), which is stored in .env, or write ${NAME} in its place with NAME set in .env", k)
			}
		}
	}
	return nil
}

// Secret is a header or env value that goes to .env; config.yaml gets ${Var}.
type Secret struct {
	Kind  string // "header" or "env"
	Key   string
	Value string
	Var   string
}

// Secrets lists the values of s that look like secrets, each with the .env
// variable that will hold it. Two keys that would share a variable are an error.
func (s *Server) Secrets(name string) ([]Secret, error) {
	var out []Secret
	vars := map[string]string{}
	for _, set := range []struct {
		kind  string
		pairs []Pair
	}{{"header", s.Headers}, {"env", s.Env}} {
		for _, p := range set.pairs {
			if !LooksSecret(p.Key, p.Value) {
				continue
			}
			v := SecretVar(name, p.Key)
			if other, dup := vars[v]; dup {
				return nil, fmt.Errorf("%s and %s would both be stored as %s in .env: rename one", other, p.Key, v)
			}
			vars[v] = p.Key
			out = append(out, Secret{Kind: set.kind, Key: p.Key, Value: p.Value, Var: v})
		}
	}
	return out, nil
}

// UseVars replaces each secret's value in s by its ${Var} reference.
func (s *Server) UseVars(secrets []Secret) {
	for _, sec := range secrets {
		ps := s.Env
		if sec.Kind == "header" {
			ps = s.Headers
		}
		for i := range ps {
			if ps[i].Key == sec.Key {
				ps[i].Value = "${" + sec.Var + "}"
			}
		}
	}
}

// SecretVar is the .env variable for a server's secret: MCP_<NAME>_<KEY>,
// upper case, every other character '_'.
func SecretVar(server, key string) string {
	return "MCP_" + envPart(server) + "_" + envPart(key)
}

func envPart(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Entry is s as config.yaml holds it, keys in the order a person would write them.
func (s *Server) Entry() Entry {
	var e Entry
	if s.Command != "" {
		e = append(e, Field{"command", s.Command})
		if len(s.Args) > 0 {
			args := make([]any, len(s.Args))
			for i, a := range s.Args {
				args[i] = a
			}
			e = append(e, Field{"args", args})
		}
		if len(s.Env) > 0 {
			e = append(e, Field{"env", pairMap(s.Env)})
		}
	} else {
		e = append(e, Field{"url", s.URL})
		if len(s.Headers) > 0 {
			e = append(e, Field{"headers", pairMap(s.Headers)})
		}
	}
	if s.Timeout > 0 {
		e = append(e, Field{"timeout", s.Timeout})
	}
	if s.ConnectTimeout > 0 {
		e = append(e, Field{"connect_timeout", s.ConnectTimeout})
	}
	if s.Trust != "" {
		e = append(e, Field{"trust", s.Trust})
	}
	if s.Disabled {
		e = append(e, Field{"enabled", false})
	}
	return e
}

func pairMap(ps []Pair) map[string]any {
	m := make(map[string]any, len(ps))
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	return m
}

// ExistsError is an add of a name that is already configured.
type ExistsError struct {
	Name string
	Path string // where it is: mcp_servers.NAME or mcp.servers.NAME
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("an MCP server named %q is already configured (%s): add --replace to overwrite it, or choose another name", e.Name, e.Path)
}

// UnknownError is a remove of a name that is not configured.
type UnknownError struct {
	Name  string
	Names []string // the configured ones
}

func (e *UnknownError) Error() string {
	if len(e.Names) == 0 {
		return fmt.Sprintf("no MCP server named %q: none is configured (add one with `hermes mcp add`)", e.Name)
	}
	return fmt.Sprintf("no MCP server named %q; configured: %s", e.Name, strings.Join(e.Names, ", "))
}

// Names are the configured servers' names, sorted, from both spellings.
func Names(d *config.Doc) []string {
	var out []string
	for _, segs := range [][]string{{ServersKey}, legacySegs} {
		if m, ok := getMap(d, segs); ok {
			for k := range m {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func getMap(d *config.Doc, segs []string) (map[string]any, bool) {
	v, ok := d.GetPath(segs)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// find returns where server name is configured: mcp_servers wins, as upstream reads it.
func find(d *config.Doc, name string) ([]string, bool) {
	for _, segs := range [][]string{{ServersKey}, legacySegs} {
		if m, ok := getMap(d, segs); ok {
			if _, ok := m[name]; ok {
				return append(slices.Clone(segs), name), true
			}
		}
	}
	return nil, false
}

// Exists reports whether a server called name is configured.
func Exists(d *config.Doc, name string) bool {
	_, ok := find(d, name)
	return ok
}

// Add writes e as server name. An existing server is refused with an *ExistsError
// unless replace; a replaced one stays where it was written (mcp.servers too).
// It returns the dotted path written.
func Add(d *config.Doc, name string, e Entry, replace bool) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if len(e) == 0 {
		return "", errors.New("empty server entry")
	}
	segs, exists := find(d, name)
	if exists && !replace {
		return "", &ExistsError{Name: name, Path: config.JoinPath(segs)}
	}
	if !exists {
		segs = []string{ServersKey, name}
	}
	// One key at a time, so the file gets them in e's order (a map would be sorted).
	if err := d.SetPath(segs, map[string]any{e[0].Key: e[0].Value}); err != nil {
		return "", err
	}
	for _, f := range e[1:] {
		if err := d.SetPath(append(slices.Clone(segs), f.Key), f.Value); err != nil {
			return "", err
		}
	}
	got, _ := d.GetPath(segs)
	if !reflect.DeepEqual(got, normalized(e.Map())) {
		return "", fmt.Errorf("writing %s did not give the intended entry; edit config.yaml by hand", config.JoinPath(segs))
	}
	return config.JoinPath(segs), nil
}

// normalized is v as the config decoder hands it back (json.Number → int).
func normalized(v any) any {
	d := config.NewDoc()
	if err := d.SetPath([]string{"v"}, v); err != nil {
		return v
	}
	out, _ := d.GetPath([]string{"v"})
	return out
}

// Remove deletes server name and returns the entry it had and the dotted path it
// was at; an unknown name is an *UnknownError.
func Remove(d *config.Doc, name string) (map[string]any, string, error) {
	segs, ok := find(d, name)
	if !ok {
		return nil, "", &UnknownError{Name: name, Names: Names(d)}
	}
	v, _ := d.GetPath(segs)
	if _, err := d.DeletePath(segs); err != nil {
		return nil, "", err
	}
	m, _ := v.(map[string]any)
	return m, config.JoinPath(segs), nil
}

// EnvRefs are the variables ${VAR} (or ${env:VAR}) that the strings of v refer to, sorted.
func EnvRefs(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, m := range refRE.FindAllStringSubmatch(x, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return out
}
