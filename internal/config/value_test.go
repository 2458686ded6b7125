package config

import (
	"encoding/json"
	"math"
	"testing"
)

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"true", true},
		{"False", false},
		{"TRUE", true},
		{"null", nil},
		{"~", nil},
		{"42", 42},
		{"-7", -7},
		{"+3", 3},
		{"0", 0},
		{"0x1F", 31},
		{"0o17", 15},
		{"1.5", 1.5},
		{"1e3", 1000.0},
		{".inf", math.Inf(1)},
		{"-.Inf", math.Inf(-1)},
		{"18446744073709551615", uint64(math.MaxUint64)},
		{"[a, b]", []any{"a", "b"}},
		{"[1, true, x]", []any{1, true, "x"}},
		{"[]", []any{}},
		{"{k: v}", map[string]any{"k": "v"}},
		{"{a: [1, 2]}", map[string]any{"a": []any{1, 2}}},
		{`"quoted # not a comment"`, "quoted # not a comment"},
		{`"42"`, "42"},
		{"'it''s'", "it's"},
		{"  7  ", 7},
		// Everything else is the plain string, exactly as typed.
		{"", ""},
		{"hello", "hello"},
		{"yes", "yes"},
		{"017", "017"},
		{"0123456", "0123456"},
		{"a: b", "a: b"},
		{"x # y", "x # y"},
		{"[unclosed", "[unclosed"},
		{"{bad", "{bad"},
		{`"a" b`, `"a" b`},
		{"- item", "- item"},
		{"99999999999999999999", "99999999999999999999"},
		{"https://example.test/v1", "https://example.test/v1"},
		{"2026-01-02", "2026-01-02"},
	}
	for _, tc := range tests {
		if got := ParseValue(tc.in); !equalValues(got, tc.want) {
			t.Errorf("ParseValue(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	if got := ParseValue(".nan"); !equalValues(got, math.NaN()) {
		t.Errorf("ParseValue(.nan) = %#v, want NaN", got)
	}
}

func TestRenderStringQuotesWhatYAMLWouldRetype(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"hello-world", "hello-world"},
		{"observability/langfuse", "observability/langfuse"},
		{"two words", "two words"},
		{"", `""`},
		{"yes", `"yes"`},
		{"No", `"No"`},
		{"on", `"on"`},
		{"y", `"y"`},
		{"null", `"null"`},
		{"True", `"True"`},
		{"123", `"123"`},
		{"1.5", `"1.5"`},
		{"0x10", `"0x10"`},
		{".inf", `".inf"`},
		{"2026-01-02", `"2026-01-02"`},
		{"-dash", `"-dash"`},
		{"a: b", `"a: b"`},
		{"a #b", `"a #b"`},
		{"trailing ", `"trailing "`},
		{"line\nbreak", `"line\nbreak"`},
		{`back\slash`, `"back\\slash"`},
		{"héllo", `"héllo"`},
		{"[x]", `"[x]"`},
		{"*alias", `"*alias"`},
	}
	for _, tc := range tests {
		if got := renderString(tc.in); got != tc.want {
			t.Errorf("renderString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		// Whatever the form, it must read back as the same string.
		d := NewDoc()
		if err := d.Set("k", tc.in); err != nil {
			t.Fatalf("Set(%q): %v", tc.in, err)
		}
		if got, _ := mustParse(t, string(d.Bytes())).Get("k"); got != tc.in {
			t.Errorf("%q written as %q reads back as %#v", tc.in, d.Bytes(), got)
		}
	}
}

func TestRenderFloatStaysFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -2, 0.5, 1e6, 1e21, 1.25e-7, math.MaxFloat64, math.Inf(1), math.Inf(-1)} {
		d := NewDoc()
		if err := d.Set("f", f); err != nil {
			t.Fatal(err)
		}
		got, _ := mustParse(t, string(d.Bytes())).Get("f")
		if g, ok := got.(float64); !ok || g != f {
			t.Errorf("%v written as %q reads back as %#v", f, d.Bytes(), got)
		}
	}
}

func TestSetAcceptsGoValueTypes(t *testing.T) {
	tests := []struct {
		in   any
		want any
	}{
		{int64(5), 5},
		{uint8(7), 7},
		{float32(0.5), 0.5},
		{[]string{"a"}, []any{"a"}},
		{map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{map[string][]int{"k": {1}}, map[string]any{"k": []any{1}}},
		{[2]bool{true, false}, []any{true, false}},
		{uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{json.Number("5"), 5},
		{json.Number("2.5"), 2.5},
		{map[string]any{"n": json.Number("-3")}, map[string]any{"n": -3}},
	}
	for _, tc := range tests {
		d := NewDoc()
		if err := d.Set("k", tc.in); err != nil {
			t.Fatalf("Set(%#v): %v", tc.in, err)
		}
		if got, _ := d.Get("k"); !equalValues(got, tc.want) {
			t.Errorf("Set(%#v) then Get = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}
