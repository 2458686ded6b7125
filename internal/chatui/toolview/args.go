package toolview

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Names of the built-in tools whose arguments or diffs toolview knows
// (internal/tools/builtin; the test checks they still match).
const (
	toolTerminal  = "terminal"
	toolReadFile  = "read_file"
	toolWriteFile = "write_file"
	toolPatch     = "patch"
)

// mainArg is the one argument that says what a built-in call does.
var mainArg = map[string]string{
	toolTerminal:  "command",
	toolReadFile:  "path",
	toolWriteFile: "path",
	toolPatch:     "path",
}

// field is one member of a JSON object, in the order it was sent.
type field struct {
	key string
	val json.RawMessage
}

// fields decodes a JSON object keeping its members' order; ok is false for
// anything else.
func fields(raw string) ([]field, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

// value is a JSON value in brief: a string as its text, anything else as
// compact JSON.
func value(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) == nil {
		return b.String()
	}
	return string(v)
}

// stringField is the string member key of a JSON object.
func stringField(fs []field, key string) (string, bool) {
	for _, f := range fs {
		if f.key == key {
			var s string
			if json.Unmarshal(f.val, &s) == nil {
				return s, true
			}
			return "", false
		}
	}
	return "", false
}

// compactArgs is a call's arguments on one line, sanitised: the command of a
// terminal call, the path of a file tool, otherwise key=value pairs in the
// order the model sent them. Arguments that are not a JSON object are shown
// as they came.
func compactArgs(name, raw string) string {
	fs, ok := fields(raw)
	if !ok {
		return termsafe.Line(strings.TrimSpace(raw))
	}
	if key, known := mainArg[name]; known {
		if s, ok := stringField(fs, key); ok {
			return termsafe.Line(s)
		}
	}
	return pairs(fs)
}

// pairs is key=value for every field, sanitised, on one line.
func pairs(fs []field) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, termsafe.Line(f.key)+"="+termsafe.Line(value(f.val)))
	}
	return strings.Join(parts, " ")
}
