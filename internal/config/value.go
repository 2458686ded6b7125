package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// normalize turns a Go value into the canonical shapes Doc hands out and accepts:
// map[string]any, []any, string, int (uint64 beyond int's range), float64, bool, nil.
// strict rejects types we could not write back faithfully (used for Set); the lenient
// form (used on decoder output) stringifies anything unexpected.
func normalize(v any, strict bool) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strict && !utf8.ValidString(x) {
			return nil, fmt.Errorf("value %q is not valid UTF-8", x)
		}
		return x, nil
	case bool:
		return x, nil
	case int:
		return x, nil
	case int8:
		return int(x), nil
	case int16:
		return int(x), nil
	case int32:
		return int(x), nil
	case int64:
		if x < math.MinInt || x > math.MaxInt {
			return nil, fmt.Errorf("integer %d does not fit", x)
		}
		return int(x), nil
	case uint8:
		return int(x), nil
	case uint16:
		return int(x), nil
	case uint32:
		return normUint(uint64(x)), nil
	case uint:
		return normUint(uint64(x)), nil
	case uint64:
		return normUint(x), nil
	case json.Number:
		// Plugins' values arrive as JSON; decoding with UseNumber keeps 5 an integer.
		if n, err := x.Int64(); err == nil {
			return normalize(n, strict)
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("invalid number %q", x.String())
		}
		return f, nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, strict)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, strict)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if strict && !utf8.ValidString(k) {
				return nil, fmt.Errorf("key %q is not valid UTF-8", k)
			}
			n, err := normalize(e, strict)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalize(e, strict)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = n
		}
		return out, nil
	}
	// Other slices and string-keyed maps (e.g. map[string]string) go through reflection.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 && !strict {
			return string(rv.Bytes()), nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			n, err := normalize(rv.Index(i).Interface(), strict)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			it := rv.MapRange()
			for it.Next() {
				n, err := normalize(it.Value().Interface(), strict)
				if err != nil {
					return nil, err
				}
				out[it.Key().String()] = n
			}
			return out, nil
		}
	case reflect.String:
		return normalize(rv.String(), strict)
	case reflect.Bool:
		return rv.Bool(), nil
	}
	if strict {
		return nil, fmt.Errorf("unsupported value type %T (use a string, number, bool, list or map)", v)
	}
	return fmt.Sprint(v), nil
}

func normUint(u uint64) any {
	if u <= math.MaxInt {
		return int(u)
	}
	return u
}

// deepCopy copies the canonical shapes so callers cannot alter a Doc's decoded tree.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// equalValues compares canonical values; unlike reflect.DeepEqual, NaN equals NaN, so a
// document holding .nan still compares equal to itself after an unrelated edit.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equalValues(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
		return x == y
	}
	return a == b
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// coreSchema holds the YAML 1.2 core-schema patterns, compiled on first use rather
// than in package init (which every hermes command pays).
var coreSchema = sync.OnceValue(func() *coreREs {
	return &coreREs{
		int:         regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`),
		octal:       regexp.MustCompile(`^0o[0-7]+$`),
		hex:         regexp.MustCompile(`^0x[0-9a-fA-F]+$`),
		float:       regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`),
		inf:         regexp.MustCompile(`^[-+]?\.(inf|Inf|INF)$`),
		nan:         regexp.MustCompile(`^\.(nan|NaN|NAN)$`),
		leadingZero: regexp.MustCompile(`^[-+]?0[0-9]`),
	}
})

type coreREs struct {
	int, octal, hex, float, inf, nan, leadingZero *regexp.Regexp
}

// resolvePlain applies the YAML 1.2 core schema to an unquoted scalar. Decimal numbers
// with a leading zero stay strings: YAML 1.1 readers (upstream's PyYAML) see octal there,
// and values like chat ids "0123" are meant as text anyway.
func resolvePlain(s string) (any, bool) {
	switch s {
	case "null", "Null", "NULL", "~":
		return nil, true
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	re := coreSchema()
	if re.leadingZero.MatchString(s) {
		return nil, false
	}
	switch {
	case re.int.MatchString(s):
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(n), true
		}
		if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 64); err == nil {
			return u, true
		}
		return nil, false
	case re.octal.MatchString(s):
		if u, err := strconv.ParseUint(s[2:], 8, 64); err == nil {
			return normUint(u), true
		}
		return nil, false
	case re.hex.MatchString(s):
		if u, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
			return normUint(u), true
		}
		return nil, false
	case re.inf.MatchString(s):
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case re.nan.MatchString(s):
		return math.NaN(), true
	case re.float.MatchString(s):
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
	}
	return nil, false
}

// ParseValue interprets a command-line value the way `hermes config set KEY VALUE` needs:
// YAML scalars (true/false, null, integers, floats, quoted strings) and flow collections
// ("[a, b]", "{k: v}") become typed values; anything else, including text that merely
// looks like YAML (e.g. "a: b" or "x # y"), is kept as the plain string.
func ParseValue(s string) any {
	t := strings.TrimSpace(s)
	if t == "" {
		return s
	}
	switch t[0] {
	case '[', '{', '"', '\'':
		var v any
		if err := yaml.Unmarshal([]byte(t), &v); err != nil {
			return s
		}
		n, err := normalize(v, false)
		if err != nil {
			return s
		}
		switch t[0] {
		case '[':
			if _, ok := n.([]any); ok {
				return n
			}
		case '{':
			if _, ok := n.(map[string]any); ok {
				return n
			}
		default:
			if str, ok := n.(string); ok && utf8.ValidString(str) {
				return str
			}
		}
		return s
	}
	if v, ok := resolvePlain(t); ok {
		return v
	}
	return s
}

// yaml11Words are plain scalars that YAML 1.1 readers such as PyYAML (upstream Hermes reads
// the same file) resolve to booleans or null, so a string with this text must be quoted.
var yaml11Words = map[string]bool{
	"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true,
}

// plainOK reports whether s can be written without quotes and still read back as the same
// string by both YAML 1.1 and 1.2 readers. It is deliberately conservative: quoting a value
// that did not need it is harmless, the reverse changes its type.
func plainOK(s string) bool {
	if s == "" || s[len(s)-1] == ' ' || yaml11Words[strings.ToLower(s)] || token.IsNeedQuoted(s) {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '/':
		case r >= '0' && r <= '9', r == '-', r == '.', r == '+', r == '@':
			if i == 0 {
				return false
			}
		case r == ' ':
			if i == 0 || strings.HasPrefix(s[i:], "  ") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func renderString(s string) string {
	if plainOK(s) {
		return s
	}
	// Go's double-quoted escapes (\n, \t, \xNN, \uNNNN, \UNNNNNNNN, \", \\) are all valid
	// YAML double-quoted escapes with the same meaning for valid UTF-8 input.
	return strconv.Quote(s)
}

func renderFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.Contains(s, ".") {
		// A float needs a dot to stay a float for YAML 1.1 readers ("1e+06" is a string there).
		if e := strings.IndexByte(s, 'e'); e >= 0 {
			s = s[:e] + ".0" + s[e:]
		} else {
			s += ".0"
		}
	}
	return s
}

// renderInline writes v in flow style on one line.
func renderInline(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return renderFloat(x)
	case string:
		return renderString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = renderInline(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = renderString(k) + ": " + renderInline(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return renderString(fmt.Sprint(v))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isBlock reports whether v is written as an indented block (non-empty collections).
func isBlock(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return false
}

// blockStyle carries the indentation habits detected in the file being edited, so new
// blocks look like their neighbours.
type blockStyle struct {
	step      int // extra indentation of a nested mapping
	seqIndent int // indentation of "- " under its key (0 = dashes flush with the key)
}

// entryLines renders `key: value` indented by pad.
func (b blockStyle) entryLines(key string, v any, pad string) []string {
	head := pad + renderString(key) + ":"
	if !isBlock(v) {
		return []string{head + " " + renderInline(v)}
	}
	return append([]string{head}, b.lines(v, pad+strings.Repeat(" ", b.childIndent(v)))...)
}

func (b blockStyle) childIndent(v any) int {
	if _, ok := v.([]any); ok {
		return b.seqIndent
	}
	return b.step
}

// lines renders the contents of a non-empty collection with its entries indented by pad.
func (b blockStyle) lines(v any, pad string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			out = append(out, b.entryLines(k, x[k], pad)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, b.itemLines(e, pad)...)
		}
	}
	return out
}

// itemLines renders one `- item` indented by pad; a collection item starts on the dash line.
func (b blockStyle) itemLines(v any, pad string) []string {
	if !isBlock(v) {
		return []string{pad + "- " + renderInline(v)}
	}
	inner := b.lines(v, pad+"  ")
	inner[0] = pad + "- " + inner[0][len(pad)+2:]
	return inner
}
