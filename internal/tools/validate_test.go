package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func toolWithParams(t *testing.T, params string) *Tool {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	tl := echoTool("x", "t", "p")
	tl.Schema["parameters"] = p
	return tl
}

func TestValidateArgsMessages(t *testing.T) {
	const schema = `{"type": "object", "additionalProperties": false, "required": ["name"],
		"$defs": {"level": {"type": "string", "enum": ["low", "high"]}},
		"properties": {
			"name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
			"n": {"type": "integer"},
			"count": {"type": "integer", "minimum": 1, "maximum": 10},
			"ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
			"mode": {"type": "string", "enum": ["fast", "slow"]},
			"level": {"$ref": "#/$defs/level"},
			"opt": {"type": ["string", "null"]},
			"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
			"inner": {"type": "object", "required": ["a"], "properties": {"a": {"type": "boolean"}}},
			"either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
			"fixed": {"const": 3}
		}}`
	tl := toolWithParams(t, schema)
	cases := []struct {
		args string
		want string // "" = valid
	}{
		{`{"name": "ada"}`, ""},
		{`{"name": "ada", "n": 1.0, "count": 10, "ratio": 1.5, "opt": null, "tags": ["a"], "inner": {"a": true}, "either": 3, "fixed": 3, "level": "low"}`, ""},
		{`{}`, `missing required argument "name"`},
		{`{"name": "ada", "n": "1"}`, `argument "n": expected integer, got string "1"`},
		{`{"name": "ada", "n": 1.5}`, `argument "n": expected integer, got number 1.5`},
		{`{"name": "ada", "count": 0}`, `argument "count": must be >= 1, got 0`},
		{`{"name": "ada", "count": 11}`, `argument "count": must be <= 10, got 11`},
		{`{"name": "ada", "ratio": 0}`, `argument "ratio": must be > 0, got 0`},
		{`{"name": "ada", "ratio": 0.7}`, `argument "ratio": must be a multiple of 0.5, got 0.7`},
		{`{"name": "ada", "mode": null}`, `argument "mode": expected string, got null`},
		{`{"name": "ada", "mode": "medium"}`, `argument "mode": must be one of "fast", "slow", got "medium"`},
		{`{"name": "ada", "level": "mid"}`, `argument "level": must be one of "low", "high", got "mid"`},
		{`{"name": "ada", "opt": 5}`, `argument "opt": expected string or null, got integer 5`},
		{`{"name": "a"}`, `argument "name": must be at least 2 characters long, got "a"`},
		{`{"name": "abcdef"}`, `argument "name": must be at most 5 characters long, got 6 characters`},
		{`{"name": "AB"}`, `argument "name": must match the pattern "^[a-z]+$", got "AB"`},
		{`{"name": "ada", "tags": []}`, `argument "tags": must have at least 1 items, got 0`},
		{`{"name": "ada", "tags": ["a", "a"]}`, `argument "tags": items must be unique, but items 0 and 1 are both "a"`},
		{`{"name": "ada", "tags": ["a", 2]}`, `argument "tags[1]": expected string, got integer 2`},
		{`{"name": "ada", "inner": {}}`, `missing required argument "inner.a"`},
		{`{"name": "ada", "inner": {"a": "yes"}}`, `argument "inner.a": expected boolean, got string "yes"`},
		{`{"name": "ada", "inner": {"x": 1}}`, `missing required argument "inner.a"`},
		{`{"name": "ada", "inner": [1]}`, `argument "inner": expected object, got array [1]`},
		{`{"name": "ada", "either": true}`, `argument "either": matches none of the allowed forms (anyOf), got true`},
		{`{"name": "ada", "fixed": 4}`, `argument "fixed": must be 3, got 4`},
		{`{"name": "ada", "extra": 1}`, `unexpected argument "extra" (known: "count", "either"`},
	}
	for _, c := range cases {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		err := tl.ValidateArgs(args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.args, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: no error, want %q", c.args, c.want)
		case c.want != "" && !strings.HasPrefix(err.Error(), c.want):
			t.Errorf("%s:\n got %q\nwant %q", c.args, err, c.want)
		}
		if err != nil {
			for _, leak := range []string{"reflect", "map[", "validating", "%!", "000000"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%s: message leaks Go internals (%s): %q", c.args, leak, err)
				}
			}
		}
	}
}

func TestUnknownTypeNameIsASchemaProblem(t *testing.T) {
	cases := []struct{ params, where string }{
		{`{"type": "dict"}`, `parameters: type "dict"`},
		{`{"type": "object", "properties": {"x": {"type": "int"}}}`, `parameters.properties.x: type "int"`},
		{`{"type": "object", "properties": {"x": {"type": ["string", "str"]}}}`, `type "str"`},
		{`{"type": "object", "properties": {"x": {"type": "array", "items": {"type": "float"}}}}`, `parameters.properties.x.items: type "float"`},
		{`{"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "bool"}]}}}`, `anyOf[1]: type "bool"`},
	}
	for _, c := range cases {
		tl := toolWithParams(t, c.params)
		if p := tl.SchemaProblem(); !strings.Contains(p, c.where) || !strings.Contains(p, "not a JSON Schema type") {
			t.Errorf("%s: schema problem %q, want mention of %q", c.params, p, c.where)
		}
		if err := tl.ValidateArgs(map[string]any{"x": map[string]any{"y": 1}}); err != nil {
			t.Errorf("%s: a sloppy schema must pass arguments unchecked: %v", c.params, err)
		}
	}
	// A property *named* "type" is not a type keyword.
	tl := toolWithParams(t, `{"type": "object", "properties": {"type": {"type": "string"}}}`)
	if p := tl.SchemaProblem(); p != "" {
		t.Fatalf("valid schema reported as sloppy: %s", p)
	}
}
