package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonNoHTML is what AppendString and Marshal must produce: encoding/json
// without HTML escaping.
func jsonNoHTML(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendStringMatchesEncoder(t *testing.T) {
	for _, s := range []string{
		"", "plain", "<b>&amp;</b>", `q"uote\back`, "\b\f\n\r\t\x00\x01\x1f\x7f",
		"é ü 日本 🙂", "\u2028\u2029", "bad \xff utf8 \xc3", "<" + strings.Repeat("é<", 50),
	} {
		got := AppendString([]byte("x"), s)
		if want := append([]byte("x"), jsonNoHTML(t, s)...); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "<&>", "\u2028\xff\"\\\x01é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), jsonNoHTML(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestMarshalLeavesHTMLAlone(t *testing.T) {
	html := strings.Repeat("<a href='x'>&</a>", 10)
	v := map[string]any{"page": html, "list": []any{html, 1.5}, "typed": []string{html}}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := jsonNoHTML(t, v); !bytes.Equal(got, want) {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Fatal("Marshal of a channel succeeded")
	}
}

func TestNumbers(t *testing.T) {
	decode := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		doc           string
		numbers, args any
	}{
		{`5`, int64(5), int64(5)},
		{`1.0`, 1.0, json.Number("1.0")},
		{`12345678901234567890`, 12345678901234567890.0, json.Number("12345678901234567890")},
		{`[1, 2.5, "x"]`, []any{int64(1), 2.5, "x"}, []any{int64(1), json.Number("2.5"), "x"}},
		{`{"a": {"b": -3}}`, map[string]any{"a": map[string]any{"b": int64(-3)}}, map[string]any{"a": map[string]any{"b": int64(-3)}}},
	}
	for _, tt := range tests {
		if got := ExactNumbers(decode(tt.doc)); !reflect.DeepEqual(got, tt.numbers) {
			t.Errorf("ExactNumbers(%s) = %#v, want %#v", tt.doc, got, tt.numbers)
		}
		if got := ExactArgs(decode(tt.doc)); !reflect.DeepEqual(got, tt.args) {
			t.Errorf("ExactArgs(%s) = %#v, want %#v", tt.doc, got, tt.args)
		}
	}
}

func TestKindOf(t *testing.T) {
	for v, want := range map[any]string{nil: "null", "s": "a string", 1.5: "a number", int64(2): "a number",
		json.Number("3"): "a number", true: "a boolean", struct{}{}: "a value"} {
		if got := KindOf(v); got != want {
			t.Errorf("KindOf(%#v) = %q, want %q", v, got, want)
		}
	}
	if got := KindOf([]any{}); got != "an array" {
		t.Errorf("KindOf([]any{}) = %q", got)
	}
	if got := KindOf(map[string]any{}); got != "an object" {
		t.Errorf("KindOf(map) = %q", got)
	}
}
