package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// argValidator checks a call's arguments against the tool's parameters schema before
// the call, so a malformed call gets a precise error instead of a plugin traceback.
type argValidator struct {
	schema *jsonschema.Resolved
	root   *jsonschema.Schema
}

// jsonTypes are the type names JSON Schema knows.
var jsonTypes = map[string]bool{
	"array": true, "boolean": true, "integer": true, "null": true, "number": true, "object": true, "string": true,
}

func newArgValidator(params map[string]any) (*argValidator, error) {
	if len(params) == 0 {
		return nil, nil
	}
	// Round-trip through JSON: plugin schemas arrive as generic maps.
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	// The library takes any type name and then rejects every value against one it
	// does not know ("dict", "int"), which would make each call fail. Such a schema
	// is sloppy, not a reason to refuse calls.
	if err := checkTypeNames(&s, "parameters"); err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &argValidator{schema: r, root: &s}, nil
}

var (
	schemaPtrType   = reflect.TypeFor[*jsonschema.Schema]()
	schemaSliceType = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMapType   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// checkTypeNames reports the first "type" under s that is not a JSON Schema type.
func checkTypeNames(s *jsonschema.Schema, at string) error {
	if s == nil {
		return nil
	}
	names := s.Types
	if s.Type != "" {
		names = []string{s.Type}
	}
	for _, n := range names {
		if !jsonTypes[n] {
			return fmt.Errorf("%s: type %q is not a JSON Schema type (use one of array, boolean, integer, null, number, object, string)", at, n)
		}
	}
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		name := schemaFieldName(f)
		switch f.Type {
		case schemaPtrType:
			if err := checkTypeNames(fv.Interface().(*jsonschema.Schema), at+"."+name); err != nil {
				return err
			}
		case schemaSliceType:
			for j, c := range fv.Interface().([]*jsonschema.Schema) {
				if err := checkTypeNames(c, fmt.Sprintf("%s.%s[%d]", at, name, j)); err != nil {
					return err
				}
			}
		case schemaMapType:
			m := fv.Interface().(map[string]*jsonschema.Schema)
			for _, k := range sortedKeys(m) {
				if err := checkTypeNames(m[k], at+"."+name+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func schemaFieldName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case tag != "" && tag != "-":
		return tag
	case f.Name == "Items" || f.Name == "ItemsArray":
		return "items"
	case f.Name == "DependencySchemas":
		return "dependencies"
	}
	return f.Name
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ValidateArgs reports what is wrong with args for tool t (nil when they fit).
func (t *Tool) ValidateArgs(args map[string]any) error {
	t.compile()
	if t.validator == nil {
		return nil
	}
	// Validate the JSON form of the arguments, as the model would have sent them.
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return err
	}
	verr := t.validator.schema.Validate(inst)
	if verr == nil {
		return nil
	}
	// The library decides; its messages speak Go (map[x:1], <invalid reflect.Value>,
	// 1.000000), so the message the model and the user see is worked out here.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var exact any
	if err := dec.Decode(&exact); err == nil {
		e := explainer{root: t.validator.root}
		if msg := e.explain(t.validator.root, exact, nil); msg != "" {
			return fmt.Errorf("%s", msg)
		}
	}
	return fmt.Errorf("arguments do not fit the tool's parameters schema: %s", innermost(verr.Error()))
}

// innermost strips the library's "validating <schema>: " chain from a message.
func innermost(msg string) string {
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, found := strings.Cut(rest, ": ")
		if !found {
			return msg
		}
		msg = after
	}
}

// explainer finds the first thing wrong with a value for a schema, in words that
// name the argument, what was expected and the value as JSON. It returns "" when
// it sees nothing wrong.
type explainer struct {
	root  *jsonschema.Schema
	depth int
}

// pathElem is one step into the arguments: an object key or an array index.
type pathElem struct {
	key   string
	index int
	isIdx bool
}

func pathString(path []pathElem) string {
	var sb strings.Builder
	for i, p := range path {
		switch {
		case p.isIdx:
			fmt.Fprintf(&sb, "[%d]", p.index)
		case i > 0:
			sb.WriteString("." + p.key)
		default:
			sb.WriteString(p.key)
		}
	}
	return sb.String()
}

func subject(path []pathElem) string {
	if len(path) == 0 {
		return "arguments"
	}
	return "argument " + strconv.Quote(pathString(path))
}

func child(path []pathElem, e pathElem) []pathElem {
	return append(append([]pathElem(nil), path...), e)
}

func (e *explainer) explain(s *jsonschema.Schema, v any, path []pathElem) string {
	if s == nil {
		return ""
	}
	if e.depth > 64 { // a recursive $ref; the library's verdict stands
		return ""
	}
	e.depth++
	defer func() { e.depth-- }()
	who := subject(path)
	if isFalseSchema(s) {
		if len(path) == 0 {
			return "the tool takes no arguments"
		}
		return fmt.Sprintf("%s is not allowed", who)
	}
	if s.Ref != "" {
		if target := e.resolveRef(s.Ref); target != nil {
			if msg := e.explain(target, v, path); msg != "" {
				return msg
			}
		}
	}
	if msg := e.explainType(s, v, who); msg != "" {
		return msg
	}
	if len(s.Enum) > 0 && !containsJSON(s.Enum, v) {
		vals := make([]string, len(s.Enum))
		for i, x := range s.Enum {
			vals[i] = jsonText(x)
		}
		return fmt.Sprintf("%s: must be one of %s, got %s", who, strings.Join(vals, ", "), jsonText(v))
	}
	if s.Const != nil && !equalJSON(*s.Const, v) {
		return fmt.Sprintf("%s: must be %s, got %s", who, jsonText(*s.Const), jsonText(v))
	}
	switch x := v.(type) {
	case json.Number:
		if msg := explainNumber(s, x, who); msg != "" {
			return msg
		}
	case string:
		if msg := explainString(s, x, who); msg != "" {
			return msg
		}
	case []any:
		if msg := e.explainArray(s, x, path); msg != "" {
			return msg
		}
	case map[string]any:
		if msg := e.explainObject(s, x, path); msg != "" {
			return msg
		}
	}
	for _, sub := range s.AllOf {
		if msg := e.explain(sub, v, path); msg != "" {
			return msg
		}
	}
	if len(s.AnyOf) > 0 && e.matching(s.AnyOf, v, path) == 0 {
		return fmt.Sprintf("%s: matches none of the allowed forms (anyOf), got %s", who, jsonText(v))
	}
	if len(s.OneOf) > 0 {
		switch e.matching(s.OneOf, v, path) {
		case 0:
			return fmt.Sprintf("%s: matches none of the allowed forms (oneOf), got %s", who, jsonText(v))
		case 1:
		default:
			return fmt.Sprintf("%s: matches more than one of the allowed forms (oneOf), got %s", who, jsonText(v))
		}
	}
	if s.Not != nil && e.explain(s.Not, v, path) == "" {
		return fmt.Sprintf("%s: must not match the schema under \"not\", got %s", who, jsonText(v))
	}
	if s.If != nil {
		branch := s.Else
		if e.explain(s.If, v, path) == "" {
			branch = s.Then
		}
		if msg := e.explain(branch, v, path); msg != "" {
			return msg
		}
	}
	return ""
}

func (e *explainer) matching(alts []*jsonschema.Schema, v any, path []pathElem) int {
	n := 0
	for _, a := range alts {
		if e.explain(a, v, path) == "" {
			n++
		}
	}
	return n
}

// resolveRef follows the local references plugin schemas use; others are left to
// the library.
func (e *explainer) resolveRef(ref string) *jsonschema.Schema {
	if ref == "#" {
		return e.root
	}
	for _, p := range []struct {
		prefix string
		defs   map[string]*jsonschema.Schema
	}{{"#/$defs/", e.root.Defs}, {"#/definitions/", e.root.Definitions}} {
		if name, ok := strings.CutPrefix(ref, p.prefix); ok {
			return p.defs[name]
		}
	}
	return nil
}

func isFalseSchema(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func (e *explainer) explainType(s *jsonschema.Schema, v any, who string) string {
	want := s.Types
	if s.Type != "" {
		want = []string{s.Type}
	}
	if len(want) == 0 {
		return ""
	}
	got := jsonTypeOf(v)
	for _, w := range want {
		if w == got || w == "number" && got == "integer" {
			return ""
		}
	}
	return fmt.Sprintf("%s: expected %s, got %s", who, strings.Join(want, " or "), describe(v))
}

func explainNumber(s *jsonschema.Schema, n json.Number, who string) string {
	f, err := n.Float64()
	if err != nil {
		return ""
	}
	bound := func(op string, b float64) string {
		return fmt.Sprintf("%s: must be %s %s, got %s", who, op, strconv.FormatFloat(b, 'g', -1, 64), n.String())
	}
	switch {
	case s.Minimum != nil && f < *s.Minimum:
		return bound(">=", *s.Minimum)
	case s.Maximum != nil && f > *s.Maximum:
		return bound("<=", *s.Maximum)
	case s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum:
		return bound(">", *s.ExclusiveMinimum)
	case s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum:
		return bound("<", *s.ExclusiveMaximum)
	}
	if m := s.MultipleOf; m != nil && *m > 0 {
		if q := f / *m; math.Abs(q-math.Round(q)) > 1e-9 {
			return fmt.Sprintf("%s: must be a multiple of %s, got %s", who, strconv.FormatFloat(*m, 'g', -1, 64), n.String())
		}
	}
	return ""
}

func explainString(s *jsonschema.Schema, str, who string) string {
	n := utf8.RuneCountInString(str)
	switch {
	case s.MinLength != nil && n < *s.MinLength:
		return fmt.Sprintf("%s: must be at least %d characters long, got %s", who, *s.MinLength, jsonText(str))
	case s.MaxLength != nil && n > *s.MaxLength:
		return fmt.Sprintf("%s: must be at most %d characters long, got %d characters", who, *s.MaxLength, n)
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(str) {
			return fmt.Sprintf("%s: must match the pattern %s, got %s", who, jsonText(s.Pattern), jsonText(str))
		}
	}
	return ""
}

func (e *explainer) explainArray(s *jsonschema.Schema, a []any, path []pathElem) string {
	who := subject(path)
	switch {
	case s.MinItems != nil && len(a) < *s.MinItems:
		return fmt.Sprintf("%s: must have at least %d items, got %d", who, *s.MinItems, len(a))
	case s.MaxItems != nil && len(a) > *s.MaxItems:
		return fmt.Sprintf("%s: must have at most %d items, got %d", who, *s.MaxItems, len(a))
	}
	if s.UniqueItems {
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if equalJSON(a[i], a[j]) {
					return fmt.Sprintf("%s: items must be unique, but items %d and %d are both %s", who, i, j, jsonText(a[i]))
				}
			}
		}
	}
	prefix := s.PrefixItems
	if len(s.ItemsArray) > 0 {
		prefix = s.ItemsArray // draft-07 tuple form
	}
	for i, x := range a {
		sub := s.Items
		if i < len(prefix) {
			sub = prefix[i]
		} else if len(s.ItemsArray) > 0 {
			sub = s.AdditionalItems
		}
		if msg := e.explain(sub, x, child(path, pathElem{index: i, isIdx: true})); msg != "" {
			return msg
		}
	}
	return ""
}

func (e *explainer) explainObject(s *jsonschema.Schema, obj map[string]any, path []pathElem) string {
	var missing []string
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			missing = append(missing, strconv.Quote(pathString(child(path, pathElem{key: r}))))
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return "missing required argument " + missing[0]
	default:
		return "missing required arguments " + strings.Join(missing, ", ")
	}
	for _, k := range sortedKeys(obj) {
		at := child(path, pathElem{key: k})
		sub, known := s.Properties[k]
		if known {
			if msg := e.explain(sub, obj[k], at); msg != "" {
				return msg
			}
		}
		for _, pat := range sortedKeys(s.PatternProperties) {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(k) {
				known = true
				if msg := e.explain(s.PatternProperties[pat], obj[k], at); msg != "" {
					return msg
				}
			}
		}
		if known || s.AdditionalProperties == nil {
			continue
		}
		if isFalseSchema(s.AdditionalProperties) {
			msg := "unexpected argument " + strconv.Quote(pathString(at))
			if len(s.Properties) > 0 {
				names := sortedKeys(s.Properties)
				for i, n := range names {
					names[i] = strconv.Quote(n)
				}
				msg += " (known: " + strings.Join(names, ", ") + ")"
			}
			return msg
		}
		if msg := e.explain(s.AdditionalProperties, obj[k], at); msg != "" {
			return msg
		}
	}
	who := subject(path)
	switch {
	case s.MinProperties != nil && len(obj) < *s.MinProperties:
		return fmt.Sprintf("%s: must have at least %d properties, got %d", who, *s.MinProperties, len(obj))
	case s.MaxProperties != nil && len(obj) > *s.MaxProperties:
		return fmt.Sprintf("%s: must have at most %d properties, got %d", who, *s.MaxProperties, len(obj))
	}
	for _, k := range sortedKeys(s.DependentRequired) {
		if _, ok := obj[k]; !ok {
			continue
		}
		for _, d := range s.DependentRequired[k] {
			if _, ok := obj[d]; !ok {
				return fmt.Sprintf("missing argument %s, required when %s is given",
					strconv.Quote(pathString(child(path, pathElem{key: d}))), strconv.Quote(pathString(child(path, pathElem{key: k}))))
			}
		}
	}
	return ""
}

// jsonTypeOf names v's JSON type as JSON Schema does (an integral number is an integer).
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
			return "integer"
		}
		return "number"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// describe is "null" or "<type> <json>", e.g. `string "1"`.
func describe(v any) string {
	if v == nil {
		return "null"
	}
	return jsonTypeOf(v) + " " + jsonText(v)
}

// jsonText renders v as compact JSON, shortened so one huge argument does not
// swamp the message.
func jsonText(v any) string {
	var sb jsonBuffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := string(sb.bytes())
	const max = 120
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return s
}

// equalJSON compares two JSON values by meaning (1 == 1.0; key order does not matter).
func equalJSON(a, b any) bool {
	return reflect.DeepEqual(normalizeJSON(a), normalizeJSON(b))
}

func containsJSON(list []any, v any) bool {
	for _, x := range list {
		if equalJSON(x, v) {
			return true
		}
	}
	return false
}

func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = normalizeJSON(y)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = normalizeJSON(y)
		}
		return out
	}
	return v
}
