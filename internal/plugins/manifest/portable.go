package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/limits"
)

// Portable packages (Agent Plugins v1, reference §2.3): a directory with a
// root plugin.json and no plugin.yaml. Nothing of it runs in a plugin
// process; its skills/*/SKILL.md are registered under the generated skill
// namespace and its root mcp.json servers join the MCP client.

// PortableFile and PortableMCPFile are the package's manifest and MCP config.
const (
	PortableFile    = "plugin.json"
	PortableMCPFile = "mcp.json"
)

// ErrNoPortable is returned by LoadPortable for a directory without plugin.json.
var ErrNoPortable = errors.New("no plugin.json")

// portableFields are the top-level fields of Agent Plugins 1.0's plugin.json.
var portableFields = map[string]bool{
	"$schema": true, "name": true, "version": true, "description": true, "author": true,
	"license": true, "homepage": true, "repository": true, "keywords": true, "extensions": true,
}

var portableNameRE = lazyre.New(`^[a-z0-9][a-z0-9._-]*$`)

// LoadPortable reads dir/plugin.json. A file that is not JSON, not an
// object, or lacks a usable name is an error saying what to fix; other
// problems are warnings and the field is ignored (the specification asks
// clients to report unknown fields and carry on).
func LoadPortable(dir string) (*Manifest, []string, error) {
	file := filepath.Join(dir, PortableFile)
	data, err := readManifestFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ErrNoPortable
	}
	if err != nil {
		return nil, nil, err
	}
	if err := limits.CheckJSON(data, file, limits.Manifest); err != nil {
		return nil, nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("%s is not valid JSON (at byte %d: %v); fix the file", file, se.Offset, err)
		}
		return nil, nil, fmt.Errorf("%s must be a JSON object with at least \"name\": %v", file, err)
	}
	if raw == nil {
		return nil, nil, fmt.Errorf("%s must be a JSON object with at least \"name\", not null", file)
	}
	var warns []string
	m := &Manifest{Portable: true, Runtime: "portable", Kind: "standalone", ManifestVersion: 1, Raw: raw, File: file}
	name, ok := raw["name"].(string)
	switch {
	case raw["name"] == nil:
		return nil, nil, fmt.Errorf("%s has no \"name\"; add one (lower case letters, digits, '-', '_' or '.')", file)
	case !ok:
		return nil, nil, fmt.Errorf("%s: \"name\" must be a string, not %s", file, jsonx.KindOf(raw["name"]))
	case !portableNameRE.MatchString(name) || strings.Contains(name, ".."):
		return nil, nil, fmt.Errorf("%s: name %q must be lower case letters, digits, '-', '_' or '.', starting with a letter or digit", file, name)
	}
	m.Name = name
	text := func(k string) string {
		v, ok := raw[k]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			warns = append(warns, fmt.Sprintf("%s: %q should be a string, not %s; ignored", file, k, jsonx.KindOf(v)))
		}
		return s
	}
	m.Version, m.Description, m.License, m.Homepage = text("version"), text("description"), text("license"), text("homepage")
	if s := text("$schema"); s != "" && !strings.Contains(s, "/schemas/1.") {
		warns = append(warns, fmt.Sprintf("%s: $schema %s is not an Agent Plugins 1.x schema; reading it as 1.0", file, s))
	}
	switch a := raw["author"].(type) {
	case nil:
	case string:
		m.Author = a
	case map[string]any:
		var parts []string
		for _, k := range []string{"name", "email", "url"} {
			if s, ok := a[k].(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
		m.Author = strings.Join(parts, ", ")
	default:
		warns = append(warns, fmt.Sprintf("%s: \"author\" should be a string or an object with name, not %s; ignored", file, jsonx.KindOf(a)))
	}
	if kw, ok := raw["keywords"].([]any); ok {
		for _, k := range kw {
			if s, ok := k.(string); ok {
				m.Tags = append(m.Tags, s)
			}
		}
	}
	for k := range raw {
		if !portableFields[k] {
			m.UnknownFields = append(m.UnknownFields, k)
		}
	}
	sort.Strings(m.UnknownFields)
	if len(m.UnknownFields) > 0 {
		warns = append(warns, fmt.Sprintf("%s: unknown field(s) ignored: %s (Agent Plugins 1.0 defines $schema, name, version, description, author, license, homepage, repository, keywords, extensions)",
			file, strings.Join(m.UnknownFields, ", ")))
	}
	return m, warns, nil
}

// PortableNamespace is the skill namespace of a portable package:
// "agent-plugin-<slug of name>-<first 8 hex digits of sha256(key)>"
// (reference §2.3), so two packages of one name never share a namespace.
func PortableNamespace(name, key string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimRight(b.String(), "-")
	if slug == "" {
		slug = "plugin"
	}
	sum := sha256.Sum256([]byte(key))
	return "agent-plugin-" + slug + "-" + hex.EncodeToString(sum[:])[:8]
}

// PortableServer is one mcp.json server of a portable package, ${PLUGIN_ROOT}
// already replaced by the package directory.
type PortableServer struct {
	Name    string
	Type    string // "stdio" or "streamable-http"
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
}

var serverNameRE = lazyre.New(`^[A-Za-z0-9_-]+$`)

// LoadPortableMCP reads dir/mcp.json (none: no servers, no error). A file
// that is not a JSON object with an "mcpServers" object is an error (the
// package's skills still load); a bad server entry is a warning and only
// that server is left out, as the specification keeps servers apart.
func LoadPortableMCP(dir string) ([]PortableServer, []string, error) {
	file := filepath.Join(dir, PortableMCPFile)
	data, err := readManifestFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := limits.CheckJSON(data, file, limits.Manifest); err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, nil, fmt.Errorf("%s is not a JSON object (%v); fix it to use the package's MCP servers", file, err)
	}
	raw, ok := doc["mcpServers"].(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s needs an \"mcpServers\" object mapping server names to {\"type\": \"stdio\", \"command\": ...} or {\"type\": \"streamable-http\", \"url\": ...}", file)
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []PortableServer
	var warns []string
	for _, n := range names {
		s, err := portableServer(dir, n, raw[n])
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s: server %q left out: %v", file, n, err))
			continue
		}
		out = append(out, s)
	}
	return out, warns, nil
}

func portableServer(dir, name string, v any) (PortableServer, error) {
	s := PortableServer{Name: name}
	if !serverNameRE.MatchString(name) {
		return s, errors.New("a server name must be letters, digits, '-' or '_'")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return s, fmt.Errorf("must be an object, not %s", jsonx.KindOf(v))
	}
	root := func(x string) string { return strings.ReplaceAll(x, "${PLUGIN_ROOT}", dir) }
	str := func(k string) (string, error) {
		x, ok := m[k]
		if !ok || x == nil {
			return "", nil
		}
		sv, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("%q must be a string, not %s", k, jsonx.KindOf(x))
		}
		return root(sv), nil
	}
	strMap := func(k string) (map[string]string, error) {
		x, ok := m[k]
		if !ok || x == nil {
			return nil, nil
		}
		mm, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q must be an object of strings, not %s", k, jsonx.KindOf(x))
		}
		out := make(map[string]string, len(mm))
		for kk, vv := range mm {
			sv, ok := vv.(string)
			if !ok {
				return nil, fmt.Errorf("%s.%s must be a string, not %s", k, kk, jsonx.KindOf(vv))
			}
			out[kk] = root(sv)
		}
		return out, nil
	}
	var err error
	if s.Type, err = str("type"); err != nil {
		return s, err
	}
	if s.Command, err = str("command"); err != nil {
		return s, err
	}
	if s.URL, err = str("url"); err != nil {
		return s, err
	}
	if s.Cwd, err = str("cwd"); err != nil {
		return s, err
	}
	if s.Env, err = strMap("env"); err != nil {
		return s, err
	}
	if s.Headers, err = strMap("headers"); err != nil {
		return s, err
	}
	if a, ok := m["args"]; ok && a != nil {
		list, ok := a.([]any)
		if !ok {
			return s, fmt.Errorf("\"args\" must be a list of strings, not %s", jsonx.KindOf(a))
		}
		for i, x := range list {
			sv, ok := x.(string)
			if !ok {
				return s, fmt.Errorf("args[%d] must be a string, not %s", i, jsonx.KindOf(x))
			}
			s.Args = append(s.Args, root(sv))
		}
	}
	if s.Type == "" {
		s.Type = "stdio"
		if s.Command == "" && s.URL != "" {
			s.Type = "streamable-http"
		}
	}
	switch s.Type {
	case "stdio":
		if strings.TrimSpace(s.Command) == "" {
			return s, errors.New("a stdio server needs a non-empty \"command\"")
		}
	case "streamable-http", "http":
		s.Type = "streamable-http"
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return s, errors.New("a streamable-http server needs a \"url\" starting with http:// or https://")
		}
	case "sse":
		return s, errors.New("type sse is not supported by hermes; use streamable-http")
	default:
		return s, fmt.Errorf("type %q is not stdio or streamable-http", s.Type)
	}
	return s, nil
}

// readManifestFile reads a small file, refusing a huge one before reading it.
func readManifestFile(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if st.Size() > int64(maxManifestSize) {
		return nil, fmt.Errorf("%s is larger than %d KiB; a manifest is a few KiB", file, maxManifestSize>>10)
	}
	return os.ReadFile(file)
}
