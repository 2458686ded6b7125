package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/jsonx"
)

func TestToolCallParamsEncoding(t *testing.T) {
	tests := []struct {
		name string
		p    ToolCallParams
	}{
		{"empty", ToolCallParams{Handle: "h1", Args: map[string]any{}}},
		{"nil args", ToolCallParams{Handle: "h1"}},
		{"plain", ToolCallParams{Handle: "h1", Args: map[string]any{"name": "Ada", "n": float64(3), "ok": true, "none": nil}}},
		{"nested and sorted", ToolCallParams{Handle: "h2", Args: map[string]any{"z": []any{1.5, "x", map[string]any{"b": 1.0, "a": []any{}}}, "a": json.Number("12.5e3")},
			Kwargs: map[string]any{"task_id": "cli", "session_id": "s"}}},
		{"escapes", ToolCallParams{Handle: "h\"3", Args: map[string]any{"q\n": "tab\there <b>&é\u2028", "ctl": "\x01"}}},
		{"big and small floats", ToolCallParams{Handle: "h", Args: map[string]any{"big": 1e300, "tiny": 1e-9, "neg": -42.0, "huge int": 1e15}}},
		{"dispatch depth", ToolCallParams{Handle: "h", Args: map[string]any{}, DispatchDepth: 3}},
		{"other types", ToolCallParams{Handle: "h", Args: map[string]any{"ints": []int{1, 2}, "i": 7, "m": map[string]string{"k": "v"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.appendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %s: %v", got, err)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got %s\nwant %s", got, want)
			}
		})
	}
}

func TestToolCallParamsEncodingRejectsWhatJSONRejects(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), json.Number("12x"), make(chan int)} {
		if _, err := (ToolCallParams{Handle: "h", Args: map[string]any{"v": v}}).appendJSON(nil); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}

// FuzzToolCallParamsEncoding: any JSON object as arguments encodes to the same
// value encoding/json produces.
func FuzzToolCallParamsEncoding(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[true,null,"x"]}`, `{"k":{"n":-0.5,"s":"\u00e9\"\\"}}`, `{"big":1e300}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var args map[string]any
		if json.Unmarshal([]byte(doc), &args) != nil {
			return
		}
		p := ToolCallParams{Handle: "h", Args: args}
		got, err := p.appendJSON(nil)
		if err != nil {
			t.Fatalf("appendJSON: %v", err)
		}
		want, _ := json.Marshal(p)
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("not JSON: %q: %v", got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}

// Nothing sent on a connection grows with HTML: a tool's HTML output is as big on
// the wire as it is.
func TestEncodingLeavesHTMLAlone(t *testing.T) {
	html := strings.Repeat("<a href='x'>&</a>", 10)
	args := map[string]any{"page": html, "list": []any{html, 1.5}, "typed": []string{html}}
	enc, err := (ToolCallParams{Handle: "h", Args: args}).appendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := jsonx.Marshal(EventParams{Handle: "h", Event: "e", Payload: args})
	if err != nil {
		t.Fatal(err)
	}
	hook := EncodeHookCall("h", "post_tool_call", m)
	for name, b := range map[string][]byte{"tool call": enc, "Marshal": m, "hook call": hook} {
		if bytes.Contains(b, []byte(`\u00`)) {
			t.Errorf("%s: HTML escaped: %.120s", name, b)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%s: not JSON: %v", name, err)
		}
	}
}
