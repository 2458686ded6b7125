package limits

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/goccy/go-yaml"
)

var fuzzKind = Kind{Noun: "a test file", Fix: "fix it", MaxBytes: 8 << 10, MaxDepth: 8, MaxNodes: 400}

// depth is the nesting of a decoded value: a scalar is 1.
func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	default:
		return 1
	}
	return d + 1
}

// What the pre-pass accepts, the parser reads within the caps: it never
// under-counts nesting. (Aliases are left out: their expansion is bounded
// elsewhere, by counting, and would make this test's decode explode.)
func FuzzCheckYAML(f *testing.F) {
	for _, s := range []string{
		"a: [1, {b: c}]\n", "- - x\n", "a:\n- b:\n  - c: 1\n", "a: |\n  [[[\n", "a: '[[''['\n",
		"a: \"[\\\"[\"\n", "a: &x [1]\n", "{a:'x', b: [1]}\n", "--- [1]\n", "a: b\n  [[1]]\n",
		"? [1]\n: 2\n", "- key: |\n    x\n  other: [1]\n", "a: !!seq [1]\n", "\"a\":[1]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		err := CheckYAML(src, "f.yaml", fuzzKind)
		if err != nil || bytes.ContainsAny(src, "*<") {
			return
		}
		var v any
		func() {
			defer func() { _ = recover() }() // the parser's own bugs are not this test's
			if yaml.Unmarshal(src, &v) != nil {
				v = nil
			}
		}()
		// +1: the pass does not count a mapping's scalar leaves.
		if d := depth(v); d > fuzzKind.MaxDepth+1 {
			t.Fatalf("accepted %q, which decodes %d levels deep (cap %d)", src, d, fuzzKind.MaxDepth)
		}
	})
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, "[["]}`, `["\"[", [[1]]]`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if CheckJSON(src, "f.json", fuzzKind) != nil {
			return
		}
		var v any
		if json.Unmarshal(src, &v) != nil {
			return
		}
		if d := depth(v); d > fuzzKind.MaxDepth+1 {
			t.Fatalf("accepted %q, which decodes %d levels deep (cap %d)", src, d, fuzzKind.MaxDepth)
		}
	})
}
