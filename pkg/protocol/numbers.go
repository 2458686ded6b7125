package protocol

import "encoding/json"

// ExactNumbers replaces every json.Number in v (decoded with UseNumber) by an int64
// when the text is an integer that fits, else by a float64, so integers stay
// integers on their way between JSON, Go and YAML (5 is never written back as 5.0).
// Maps and slices are changed in place; the (possibly new) value is returned.
func ExactNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = ExactNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = ExactNumbers(e)
		}
	}
	return v
}

// ExactArgs is ExactNumbers for tool-call arguments, which only travel on as
// JSON: an integer that fits int64 becomes one (Go code compares it as such),
// every other number keeps its json.Number text, so a plugin gets exactly what
// the model wrote: 1.0 stays a float, 12345678901234567890 an exact int, and
// 1e400 reaches Python's json as inf instead of failing to encode.
func ExactArgs(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = ExactArgs(e)
		}
	case []any:
		for i, e := range x {
			x[i] = ExactArgs(e)
		}
	}
	return v
}
