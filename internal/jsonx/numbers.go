package jsonx

import (
	"encoding/json"
	"fmt"
)

// ExactNumbers replaces every json.Number in v (decoded with UseNumber) by an int64
// when the text is an integer that fits, else by a float64, so integers stay
// integers on their way between JSON, Go and YAML (5 is never written back as 5.0).
// Maps and slices are changed in place; the (possibly new) value is returned.
func ExactNumbers(v any) any {
	return mapNumbers(v, func(n json.Number) any {
		f, _ := n.Float64()
		return f
	})
}

// ExactArgs is ExactNumbers for tool-call arguments, which only travel on as
// JSON: an integer that fits int64 becomes one (Go code compares it as such),
// every other number keeps its json.Number text, so a plugin gets exactly what
// the model wrote: 1.0 stays a float, 12345678901234567890 an exact int, and
// 1e400 reaches Python's json as inf instead of failing to encode.
func ExactArgs(v any) any {
	return mapNumbers(v, func(n json.Number) any { return n })
}

// mapNumbers turns every json.Number in v into an int64 when it is an integer
// that fits, else into other(n); maps and slices are changed in place.
func mapNumbers(v any, other func(json.Number) any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		return other(x)
	case map[string]any:
		for k, e := range x {
			x[k] = mapNumbers(e, other)
		}
	case []any:
		for i, e := range x {
			x[i] = mapNumbers(e, other)
		}
	}
	return v
}

// KindOf names the kind of a decoded JSON value for messages: "null", "an
// array", "a string", "a number", "a boolean", "an object".
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64, int64, int:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// KindOfYAML names the kind of a decoded YAML value in YAML's words for
// messages about config files: "empty", "a string", "a boolean", "a number",
// "a list", "a mapping".
func KindOfYAML(v any) string {
	switch v.(type) {
	case nil:
		return "empty"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
