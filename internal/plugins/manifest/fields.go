package manifest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Each manifest field is read by upstream's rules: a value of the wrong type is a
// warning naming the field, and the field keeps its default.

var validKinds = map[string]bool{
	"standalone": true, "backend": true, "exclusive": true, "platform": true, "model-provider": true,
}

// configSchemaTypes are the type names config_schema understands.
var configSchemaTypes = map[string]bool{
	"str": true, "string": true, "int": true, "integer": true, "float": true, "number": true,
	"bool": true, "boolean": true, "list": true, "array": true, "dict": true, "object": true,
}

// fieldParser turns decoded values into typed fields, collecting warnings.
type fieldParser struct {
	file  string
	raw   map[string]any
	lit   map[string]string
	warns []string
}

func (p *fieldParser) warnf(format string, args ...any) {
	p.warns = append(p.warns, p.file+": "+fmt.Sprintf(format, args...))
}

func (p *fieldParser) wrongType(field, want string, got any) {
	p.warnf("%s must be %s, not %s; ignoring it", field, want, typeName(got))
}

// typeName names a decoded YAML value's type for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case uint64, int64, int, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("a %T", v)
}

// truthy is Python truthiness for decoded YAML values.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case uint64:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// scalarString renders a scalar as text; ok is false for lists and mappings.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

// str reads a text field. Numbers and booleans keep their source text
// (version: 1.10 is "1.10"); null is absent; lists and mappings warn.
func (p *fieldParser) str(field string) string {
	v, ok := p.raw[field]
	if !ok || v == nil {
		return ""
	}
	if s, isStr := v.(string); isStr {
		return s
	}
	if lit, ok := p.lit[field]; ok {
		return lit
	}
	if s, ok := scalarString(v); ok {
		return s
	}
	p.wrongType(field, "a string", v)
	return ""
}

func (p *fieldParser) name(dirName string) string {
	v, present := p.raw["name"]
	if !present || v == nil {
		return dirName
	}
	name, ok := p.lit["name"]
	if !ok {
		name, ok = scalarString(v)
	}
	if !ok {
		p.warnf("name must be a string, not %s; using the directory name %q", typeName(v), dirName)
		return dirName
	}
	if !ValidDirName(name) {
		p.warnf("name %q cannot name a plugin (it must not be empty, \".\" or \"..\", or contain '/', '\\' or NUL); using the directory name %q", name, dirName)
		return dirName
	}
	return name
}

func (p *fieldParser) author() string {
	v, ok := p.raw["author"]
	if !ok || v == nil {
		return ""
	}
	if m, isMap := v.(map[string]any); isMap {
		var parts []string
		for _, f := range []string{"name", "email", "url"} {
			if s, ok := scalarString(m[f]); ok && truthy(m[f]) {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	}
	return p.str("author")
}

func (p *fieldParser) list(field, want string) []any {
	v, ok := p.raw[field]
	if !ok || v == nil {
		return nil
	}
	l, isList := v.([]any)
	if !isList {
		p.wrongType(field, want, v)
		return nil
	}
	return l
}

// strList reads a list of names; scalar items become text, others are skipped.
func (p *fieldParser) strList(field string) []string {
	items := p.list(field, "a list of strings")
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := scalarString(it)
		if !ok || it == nil {
			p.warnf("%s item %d must be a string, not %s; skipping it", field, i+1, typeName(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *fieldParser) envList(field string) []EnvVar {
	items := p.list(field, "a list of variable names or {name, description, url, secret} mappings")
	var out []EnvVar
	for i, it := range items {
		switch x := it.(type) {
		case string:
			if strings.TrimSpace(x) == "" {
				p.warnf("%s item %d is an empty variable name; skipping it", field, i+1)
				continue
			}
			out = append(out, EnvVar{Name: x})
		case map[string]any:
			name, _ := x["name"].(string)
			if name == "" {
				p.warnf("%s item %d has no name; add name: VARIABLE or remove the item", field, i+1)
				continue
			}
			ev := EnvVar{Name: name}
			ev.Description, _ = scalarString(x["description"])
			ev.URL, _ = scalarString(x["url"])
			// Platform plugins write password: for the same hidden-input flag.
			for _, key := range []string{"secret", "password"} {
				sv, present := x[key]
				if !present || sv == nil {
					continue
				}
				b, isBool := Bool(sv) // PyYAML's yes/no/on/off too, as upstream reads them
				if !isBool {
					p.warnf("%s item %q: %s must be true or false, not %s; treating it as false", field, name, key, typeName(sv))
					continue
				}
				ev.Secret = ev.Secret || b
			}
			out = append(out, ev)
		default:
			p.warnf("%s item %d must be a variable name or a {name, description, url, secret} mapping, not %s; skipping it", field, i+1, typeName(it))
		}
	}
	return out
}

func (p *fieldParser) kind() string {
	v, ok := p.raw["kind"]
	if !ok || v == nil {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		p.warnf("kind must be a string, not %s; treating the plugin as 'standalone'", typeName(v))
		return "standalone"
	}
	k := strings.ToLower(strings.TrimSpace(s))
	if !validKinds[k] {
		p.warnf("unknown kind %q (valid: backend, exclusive, model-provider, platform, standalone); treating the plugin as 'standalone'", s)
		return "standalone"
	}
	return k
}

// toInt converts the way Python's int() does for the values YAML produces:
// integers, integral floats (truncated), numeric strings and booleans.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case uint64:
		if x > uint64(int(^uint(0)>>1)) {
			return 0, false
		}
		return int(x), true
	case int64:
		return int(x), true
	case float64:
		if x != x || x > 1<<53 || x < -(1<<53) {
			return 0, false
		}
		return int(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		return n, err == nil
	}
	return 0, false
}

func (p *fieldParser) manifestVersion() int {
	v, ok := p.raw["manifest_version"]
	if !ok {
		return 1
	}
	n, ok := toInt(v)
	if !ok {
		p.warnf("manifest_version %s is not an integer; treating it as 1", describe(v))
		return 1
	}
	if n > SupportedManifestVersion {
		p.warnf("manifest_version %d is newer than this hermes supports (%d); loading anyway and ignoring unknown fields", n, SupportedManifestVersion)
	}
	return n
}

func (p *fieldParser) apiVersion() *int {
	v, ok := p.raw["api_version"]
	if !ok || v == nil {
		return nil
	}
	n, ok := toInt(v)
	if !ok {
		p.warnf("api_version %s is not an integer; ignoring it", describe(v))
		return nil
	}
	return &n
}

// describe renders a value for a message: scalars as themselves, else the type.
func describe(v any) string {
	if s, ok := scalarString(v); ok {
		return strconv.Quote(s)
	}
	return typeName(v)
}

func (p *fieldParser) requirements() []Requirement {
	items := p.list("requires_plugins", "a list")
	var out []Requirement
	for i, it := range items {
		switch x := it.(type) {
		case string:
			if x != "" {
				out = append(out, Requirement{ID: x})
				continue
			}
		case map[string]any:
			if id, _ := x["id"].(string); id != "" {
				r := Requirement{ID: id}
				if vr, present := x["version_range"]; present && vr != nil {
					r.VersionRange, _ = scalarString(vr)
				}
				out = append(out, r)
				continue
			}
		}
		p.warnf("requires_plugins item %d (%s) must be a plugin id string or a {id, version_range} mapping; skipping it", i+1, describe(it))
	}
	return out
}

func (p *fieldParser) pythonDeps() []string {
	items := p.list("python_dependencies", "a list of requirement strings")
	var out []string
	for i, it := range items {
		s, _ := it.(string)
		if s = strings.TrimSpace(s); s == "" {
			p.warnf("python_dependencies item %d (%s) must be a non-empty requirement string; skipping it", i+1, describe(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *fieldParser) configSchema() map[string]SchemaField {
	v, ok := p.raw["config_schema"]
	if !ok || v == nil {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		p.wrongType("config_schema", "a mapping of setting name to {type, default, description, required}", v)
		return nil
	}
	out := make(map[string]SchemaField, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable warning order
	for _, key := range keys {
		spec, isMap := m[key].(map[string]any)
		if !isMap {
			p.warnf("config_schema entry %q must be a mapping (e.g. {type: str}), not %s; skipping it", key, typeName(m[key]))
			continue
		}
		var f SchemaField
		if t, present := spec["type"]; present && t != nil {
			f.Type, _ = scalarString(t)
			if !configSchemaTypes[strings.ToLower(f.Type)] {
				p.warnf("config_schema entry %q declares unknown type %q (known: array, bool, boolean, dict, float, int, integer, list, number, object, str, string); its type is not checked", key, f.Type)
			}
		}
		f.Default, f.HasDefault = spec["default"]
		f.Description, _ = scalarString(spec["description"])
		if r, present := spec["required"]; present && r != nil {
			b, isBool := Bool(r)
			if !isBool {
				p.warnf("config_schema entry %q: required must be true or false, not %s; treating it as false", key, typeName(r))
			}
			f.Required = b
		}
		out[key] = f
	}
	return out
}

func (p *fieldParser) capabilities() []string {
	v, ok := p.raw["capabilities"]
	if !ok || v == nil {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		if !truthy(v) {
			return nil
		}
		p.wrongType("capabilities", "a list of capability ids", v)
		return nil
	}
	var out []string
	for _, it := range items {
		s, isStr := it.(string)
		if !isStr {
			p.warnf("capabilities: ignoring %s entry %s; entries are capability ids such as tools.override", typeName(it), describe(it))
			continue
		}
		c := strings.TrimSpace(s)
		if !KnownCapability(c) {
			p.warnf("unknown capability %q (known: %s); ignoring it", c, strings.Join(sortedCapabilities(), ", "))
			continue
		}
		if !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *fieldParser) runtime() string {
	v, ok := p.raw["runtime"]
	if !ok || v == nil {
		return ""
	}
	s, _ := v.(string)
	switch r := strings.ToLower(strings.TrimSpace(s)); r {
	case "python", "exec":
		return r
	}
	p.warnf("runtime %s is not supported (use python or exec); using the default", describe(v))
	return ""
}

// command reads the exec argv: a list of strings, or one word as a shorthand
// for a single-element argv. No shell splitting is done, so a string with
// spaces is refused rather than guessed at.
func (p *fieldParser) command() []string {
	v, ok := p.raw["command"]
	if !ok || v == nil {
		return nil
	}
	const want = "a list of strings (argv), e.g. [node, index.js]"
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n") {
			p.wrongType("command", want, v)
			return nil
		}
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := scalarString(it)
			if !ok || it == nil || s == "" {
				p.warnf("command must be %s; item %s is not a non-empty string, ignoring command", want, describe(it))
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	p.wrongType("command", want, v)
	return nil
}
