package config

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/testutil/yamlbomb"
)

func TestParseErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		wantPre  string // error must start with this
		wantText string // and contain this
	}{
		{"bad indentation", "model:\n  a: 1\n b: 2\n", "config.yaml:3:", "fix the file"},
		// The line of the offending ':', as PyYAML reports it (goccy names the scalar before it).
		{"indented key after a value", "_config_version: 21\nmodel: x\n  name: y\n", "config.yaml:3: mapping value is not allowed", ""},
		{"indented key at the end", "model: x\n  name: y", "config.yaml:2: mapping value is not allowed", ""},
		{"second colon on a line", "a: b: c\n", "config.yaml:1: mapping value is not allowed", ""},
		{"unclosed flow list", "plugins:\n  enabled: [a, b\nmodel: x\n", "config.yaml:", "fix the file"},
		{"tab indentation", "plugins:\n\tenabled: []\n", "config.yaml:2:", ""},
		{"two documents", "a: 1\n---\nb: 2\n", "config.yaml:3:", "2 YAML documents"},
		{"top-level list", "- a\n- b\n", "config.yaml:1:", "must be a mapping"},
		{"top-level scalar", "just text\n", "config.yaml:1:", "must be a mapping"},
		{"bare carriage return", "a: 1\nb: 2\rc: 3\n", "config.yaml:2:", "carriage return"},
		{"invalid utf-8", "a: 1\nb: \xff\n", "config.yaml:2:", "not valid UTF-8"},
		// Accepted by the parser only at the very end of the input: nothing could be added.
		{"key and colon split across lines", "0 \n:", "config.yaml:2:", "no setting could be added"},
		// 9^9 values once expanded: refused before decoding, not an out-of-memory crash.
		{"alias bomb", yamlbomb.Source(), "config.yaml:", "aliases expand to more than 1000000 values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "config.yaml")
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.HasPrefix(err.Error(), tc.wantPre) || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error = %q, want prefix %q containing %q", err, tc.wantPre, tc.wantText)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error is %T, want *ParseError", err)
			}
		})
	}
}

func TestParseAcceptsEmptyAndCommentOnly(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# just a comment\n", "~\n", "---\n", "%YAML 1.2\n---\na: 1\n"} {
		d, err := Parse([]byte(src), "config.yaml")
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if m := d.Map(); m == nil {
			t.Errorf("Parse(%q).Map() is nil, want an empty map", src)
		}
		if !bytes.Equal(d.Bytes(), []byte(src)) {
			t.Errorf("Bytes() = %q, want the input unchanged", d.Bytes())
		}
	}
}

func TestByteOrderMarkIsNotContent(t *testing.T) {
	for _, src := range []string{"\ufeffplugins:\n  enabled: [hw]\n", "\ufeff# c\nplugins: {enabled: [hw]}\n", "\ufeffplugins:\n  enabled:\n  - hw"} {
		d, err := Parse([]byte(src), "config.yaml")
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if v, ok := d.Get("plugins.enabled"); !ok || !reflect.DeepEqual(v, []any{"hw"}) {
			t.Errorf("Parse(%q): plugins.enabled = %v, %v; want [hw]", src, v, ok)
		}
		if _, ok := d.Map()["\ufeffplugins"]; ok {
			t.Errorf("Parse(%q): the mark was read into the first key", src)
		}
		if !bytes.Equal(d.Bytes(), []byte(src)) {
			t.Errorf("Bytes() = %q, want the input unchanged", d.Bytes())
		}
	}
}

func TestGetTypes(t *testing.T) {
	src := `s: text
q: "quoted"
i: 42
neg: -7
big: 18446744073709551615
f: 1.5
inf: .inf
b: true
n: null
empty:
l: [a, 1]
m: {k: v}
nested:
  deeper:
    x: 1
"dotted.key": yes
date: 2026-01-02
`
	d, err := Parse([]byte(src), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want any
		ok   bool
	}{
		{"s", "text", true},
		{"q", "quoted", true},
		{"i", 42, true},
		{"neg", -7, true},
		{"big", uint64(math.MaxUint64), true},
		{"f", 1.5, true},
		{"inf", math.Inf(1), true},
		{"b", true, true},
		{"n", nil, true},
		{"empty", nil, true},
		{"l", []any{"a", 1}, true},
		{"m", map[string]any{"k": "v"}, true},
		{"nested.deeper.x", 1, true},
		{`"dotted.key"`, "yes", true},
		{"date", "2026-01-02", true},
		{"missing", nil, false},
		{"s.below", nil, false},
		{"nested.deeper.x.y", nil, false},
		{"bad..path", nil, false},
	}
	for _, tc := range tests {
		got, ok := d.Get(tc.path)
		if ok != tc.ok || !equalValues(got, tc.want) {
			t.Errorf("Get(%q) = %#v, %v; want %#v, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGetReturnsCopies(t *testing.T) {
	d, err := Parse([]byte("m: {k: v}\nl: [a]\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Get("m")
	m.(map[string]any)["k"] = "changed"
	l, _ := d.Get("l")
	l.([]any)[0] = "changed"
	whole := d.Map()
	whole["m"] = nil
	if got, _ := d.Get("m.k"); got != "v" {
		t.Errorf("m.k = %v after mutating a returned map; the Doc must not share it", got)
	}
	if got, _ := d.Get("l"); !equalValues(got, []any{"a"}) {
		t.Errorf("l = %v after mutating a returned list", got)
	}
}

func TestSplitJoinPath(t *testing.T) {
	tests := []struct {
		path string
		segs []string
		err  bool
	}{
		{"a", []string{"a"}, false},
		{"plugins.entries.my-plugin.settings.x", []string{"plugins", "entries", "my-plugin", "settings", "x"}, false},
		{`plugins.entries."acme.tools".settings`, []string{"plugins", "entries", "acme.tools", "settings"}, false},
		{`plugins.entries.observability/langfuse.settings`, []string{"plugins", "entries", "observability/langfuse", "settings"}, false},
		{`a."say \"hi\"".b`, []string{"a", `say "hi"`, "b"}, false},
		{`a."back\\slash"`, []string{"a", `back\slash`}, false},
		{"", nil, true},
		{"a..b", nil, true},
		{"a.", nil, true},
		{".a", nil, true},
		{`a."open`, nil, true},
		{`a."x"y`, nil, true},
	}
	for _, tc := range tests {
		segs, err := SplitPath(tc.path)
		if (err != nil) != tc.err {
			t.Errorf("SplitPath(%q) error = %v, want error %v", tc.path, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		if strings.Join(segs, "\x00") != strings.Join(tc.segs, "\x00") {
			t.Errorf("SplitPath(%q) = %q, want %q", tc.path, segs, tc.segs)
		}
		back, err := SplitPath(JoinPath(segs))
		if err != nil || strings.Join(back, "\x00") != strings.Join(segs, "\x00") {
			t.Errorf("SplitPath(JoinPath(%q)) = %q, %v; want a round trip", segs, back, err)
		}
	}
}

func TestSetErrors(t *testing.T) {
	src := "model: gpt\nplugins:\n  enabled: [a]\nanchor: &a {x: 1}\nalias: *a\n"
	tests := []struct {
		name  string
		path  string
		value any
		want  string
	}{
		{"scalar in the middle", "model.name", "x", `"model" is a string, not a mapping`},
		{"list in the middle", "plugins.enabled.x", 1, `"plugins.enabled" is a list, not a mapping`},
		{"alias in the middle", "alias.y", 1, `"alias" is an alias (*a)`},
		{"unsupported type", "x", struct{}{}, "unsupported value type"},
		{"invalid utf-8", "x", "\xff", "not valid UTF-8"},
		{"empty path", "", 1, "empty config key"},
		{"empty segment", "a..b", 1, "empty part"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(src), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = d.Set(tc.path, tc.value)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Set(%q) error = %v, want it to mention %q", tc.path, err, tc.want)
			}
			if string(d.Bytes()) != src {
				t.Errorf("a failed Set changed the document:\n%s", d.Bytes())
			}
		})
	}
}

func TestSetShapes(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		path  string
		value any
		want  string
	}{
		{"scalar to block map", "a: 1  # note\nb: 2\n", "a", map[string]any{"x": 1}, "a:  # note\n  x: 1\nb: 2\n"},
		{"block map to scalar", "a:\n  x: 1\n  y: 2\nb: 2\n", "a", "flat", "a: flat\nb: 2\n"},
		{"block map to list keeps indent", "a:\n    x: 1\nb: 2\n", "a", []string{"p"}, "a:\n    - p\nb: 2\n"},
		{"flow list stays flow", "a: [x]  # c\n", "a", []any{"p", 2}, "a: [p, 2]  # c\n"},
		{"literal replaced", "a: |\n  one\n  two\nb: 1\n", "a", "short", "a: short\nb: 1\n"},
		{"null intermediate", "a: ~\n", "a.b.c", true, "a:\n  b:\n    c: true\n"},
		{"flow mapping insert", "a: {x: 1}\n", "a.k", "z", "a: {x: 1, k: z}\n"},
		{"empty flow mapping insert", "a: {}\n", "a.k", 1.0, "a: {k: 1.0}\n"},
		{"YAML 1.1 boolean words are quoted", "a: {}\n", "a.y", "n", "a: {\"y\": \"n\"}\n"},
		{"no trailing newline", "a: 1", "b", 2, "a: 1\nb: 2"},
		// A block scalar ending the file without a line break has no trailing newline in its
		// value; strip chomping keeps it that way once a key follows.
		{"block scalar at end of file", "a: |\n  text", "b", 1, "a: |-\n  text\nb: 1"},
		{"string needing quotes", "a: 1\n", "b", "yes", "a: 1\nb: \"yes\"\n"},
		{"multi-line string", "a: 1\n", "b", "x\ny", "a: 1\nb: \"x\\ny\"\n"},
		{"key needing quotes", "a: 1\n", `"x: y"`, 1, "a: 1\n\"x: y\": 1\n"},
		{"empty list and map", "a: 1\n", "b", map[string]any{"l": []any{}, "m": map[string]any{}}, "a: 1\nb:\n  l: []\n  m: {}\n"},
		{"list of maps", "", "l", []any{map[string]any{"a": 1, "b": 2}}, "l:\n  - a: 1\n    b: 2\n"},
		{"duplicate key: the effective last one changes", "a: 1\na: 2\n", "a", 3, "a: 1\na: 3\n"},
		{"tab before a value", "a:\t1   # c\nb:\t[x]\n", "a", 5, "a:\t5   # c\nb:\t[x]\n"},
		{"escaped string after a tab", "a:\t\"\\tx\\u00e9\"  # c\nb: 1\n", "a", "p", "a:\t\"p\"  # c\nb: 1\n"},
		{"tab before a flow list", "b:\t[x]\n", "b", []any{"p"}, "b:\t[p]\n"},
		{"same value is a no-op edit", "a: 1   # keep\n", "a", 1, "a: 1   # keep\n"},
		// A byte order mark is not part of the first key, and stays in the file.
		{"byte order mark kept", "\ufeffplugins:\n  enabled: [a]  # c\n", "plugins.enabled", []any{"a", "b"}, "\ufeffplugins:\n  enabled: [a, b]  # c\n"},
		{"byte order mark, flow document", "\ufeff{plugins: {enabled: [a]}}\n", "plugins.enabled", []any{"b"}, "\ufeff{plugins: {enabled: [b]}}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.src), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Set(tc.path, tc.value); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		path    string
		changed bool
		want    string
	}{
		{"block key with comment above kept", "# about a\na: 1  # inline\nb: 2\n", "a", true, "# about a\nb: 2\n"},
		{"block value", "a:\n  x: 1\n  y:\n    - q\nb: 2\n", "a.y", true, "a:\n  x: 1\nb: 2\n"},
		{"flow first", "a: {x: 1, y: 2, z: 3}\n", "a.x", true, "a: {y: 2, z: 3}\n"},
		{"flow middle", "a: {x: 1, y: 2, z: 3}\n", "a.y", true, "a: {x: 1, z: 3}\n"},
		{"flow only", "a: {x: 1}\n", "a.x", true, "a: {}\n"},
		{"last top-level key", "# header\na: 1\n", "a", true, "# header\n"},
		{"missing", "a: 1\n", "b", false, "a: 1\n"},
		{"duplicate keys all go", "a: 1\nb: 2\na: 3\n", "a", true, "b: 2\n"},
		{"through a scalar", "a: 1\n", "a.b", false, "a: 1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.src), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			changed, err := d.Delete(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed || string(d.Bytes()) != tc.want {
				t.Errorf("Delete(%q) = %v,\n%q; want %v,\n%q", tc.path, changed, d.Bytes(), tc.changed, tc.want)
			}
		})
	}
}

func TestListEdits(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		op      string // "+" append, "-" remove
		item    string
		changed bool
		want    string
		wantErr string
	}{
		{"append duplicate", "l: [a, b]\n", "+", "a", false, "l: [a, b]\n", ""},
		{"append to missing", "x: 1\n", "+", "a", true, "x: 1\nl:\n  - a\n", ""},
		{"append to null", "l:\nx: 1\n", "+", "a", true, "l:\n  - a\nx: 1\n", ""},
		{"append to empty flow", "l: []\n", "+", "a", true, "l: [a]\n", ""},
		{"append multi-line flow", "l: [a,\n  b]\n", "+", "c", true, "l: [a,\n  b, c]\n", ""},
		{"append quoted", "l: [a]\n", "+", "has space,comma", true, "l: [a, \"has space,comma\"]\n", ""},
		{"int item does not count as the string", "l: [1]\n", "+", "1", true, "l: [1, \"1\"]\n", ""},
		{"append to scalar", "l: text\n", "+", "a", false, "l: text\n", "it is a string, not a list"},
		{"append to mapping", "l: {a: 1}\n", "+", "a", false, "l: {a: 1}\n", "it is a mapping, not a list"},
		{"remove missing item", "l: [a]\n", "-", "z", false, "l: [a]\n", ""},
		{"remove from missing list", "x: 1\n", "-", "z", false, "x: 1\n", ""},
		{"remove runs", "l: [a, a, b, a, c, a]\n", "-", "a", true, "l: [b, c]\n", ""},
		{"remove first flow", "l: [a, b]  # c\n", "-", "a", true, "l: [b]  # c\n", ""},
		{"remove block middle", "l:\n  - a\n  - b   # bee\n  - c\n", "-", "b", true, "l:\n  - a\n  - c\n", ""},
		{"remove all block", "l:\n  - a\n  - a\nx: 1\n", "-", "a", true, "l: []\nx: 1\n", ""},
		{"remove from scalar", "l: 5\n", "-", "a", false, "l: 5\n", "it is a number, not a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.src), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var changed bool
			if tc.op == "+" {
				changed, err = d.ListAppend("l", tc.item)
			} else {
				changed, err = d.ListRemove("l", tc.item)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want it to mention %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed || string(d.Bytes()) != tc.want {
				t.Errorf("changed=%v\n%q\nwant changed=%v\n%q", changed, d.Bytes(), tc.changed, tc.want)
			}
		})
	}
}

func TestEditsKeepEveryOtherLine(t *testing.T) {
	// A property over all golden edits on the realistic file: every comment line of the
	// input is still in the output unless it was part of the edited value.
	d0, err := Parse([]byte(realisticForTest(t)), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var comments []string
	for _, line := range strings.Split(string(d0.Bytes()), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			comments = append(comments, line)
		}
	}
	if len(comments) < 4 {
		t.Fatalf("realistic.yaml should have several comment lines, found %d", len(comments))
	}
	for _, tc := range goldenCases {
		if tc.in != "@realistic" {
			continue
		}
		d, _ := Parse(d0.Bytes(), "config.yaml")
		if err := tc.edit(d); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, c := range comments {
			if !bytes.Contains(d.Bytes(), []byte(c)) {
				t.Errorf("%s: comment line %q was lost", tc.name, c)
			}
		}
	}
}

// TestSetSeenThroughAliases: an edit inside an anchored node is read by its
// aliases and merge keys, and a key that overrides a merged one keeps its value.
// (It was refused before: the edit changes what the aliases read, which is what
// the file's author asked for by writing them.)
func TestSetSeenThroughAliases(t *testing.T) {
	flow, err := Parse([]byte("anchor: &a {x: 1}\nalias: *a\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := flow.Set("anchor.y", 2); err != nil {
		t.Fatal(err)
	}
	if got, _ := flow.Get("alias"); !equalValues(got, map[string]any{"x": 1, "y": 2}) {
		t.Errorf("alias = %#v after setting anchor.y", got)
	}

	d, err := Parse([]byte(anchored), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		path string
		v    any
	}{{"base.url", "http://b"}, {"base.key", "k9"}, {"name", "bob"}, {"list", []any{3}}} {
		if err := d.Set(e.path, e.v); err != nil {
			t.Fatalf("set %s: %v", e.path, err)
		}
	}
	for path, want := range map[string]any{
		"prod.url": "http://b", "prod.key": "k2", "base.key": "k9", "owner": "bob", "list2": []any{3},
	} {
		if got, _ := d.Get(path); !equalValues(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
}
