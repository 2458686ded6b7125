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
