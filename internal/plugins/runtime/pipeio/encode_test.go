package pipeio

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestToolCallParamsEncoding(t *testing.T) {
	tests := []struct {
		name string
		p    protocol.ToolCallParams
	}{
		{"empty", protocol.ToolCallParams{Handle: "h1", Args: map[string]any{}}},
		{"nil args", protocol.ToolCallParams{Handle: "h1"}},
		{"plain", protocol.ToolCallParams{Handle: "h1", Args: map[string]any{"name": "Ada", "n": float64(3), "ok": true, "none": nil}}},
		{"nested and sorted", protocol.ToolCallParams{Handle: "h2", Args: map[string]any{"z": []any{1.5, "x", map[string]any{"b": 1.0, "a": []any{}}}, "a": json.Number("12.5e3")},
			Kwargs: map[string]any{"task_id": "cli", "session_id": "s"}}},
		{"escapes", protocol.ToolCallParams{Handle: "h\"3", Args: map[string]any{"q\n": "tab\there <b>&é\u2028", "ctl": "\x01"}}},
		{"big and small floats", protocol.ToolCallParams{Handle: "h", Args: map[string]any{"big": 1e300, "tiny": 1e-9, "neg": -42.0, "huge int": 1e15}}},
		{"dispatch depth", protocol.ToolCallParams{Handle: "h", Args: map[string]any{}, DispatchDepth: 3}},
		{"other types", protocol.ToolCallParams{Handle: "h", Args: map[string]any{"ints": []int{1, 2}, "i": 7, "m": map[string]string{"k": "v"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendToolCall(nil, tt.p)
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
		if _, err := appendToolCall(nil, protocol.ToolCallParams{Handle: "h", Args: map[string]any{"v": v}}); err == nil {
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
		p := protocol.ToolCallParams{Handle: "h", Args: args}
		got, err := appendToolCall(nil, p)
		if err != nil {
			t.Fatalf("appendToolCall: %v", err)
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
	enc, err := appendToolCall(nil, protocol.ToolCallParams{Handle: "h", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	m, err := jsonx.Marshal(protocol.EventParams{Handle: "h", Event: "e", Payload: args})
	if err != nil {
		t.Fatal(err)
	}
	hook := protocol.EncodeHookCall("h", "post_tool_call", m)
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

// TestAppendRequestFramesAsTheCodec: the hand-framed request is the line
// protocol.EncodeMessage makes of the same request, byte for byte.
func TestAppendRequestFramesAsTheCodec(t *testing.T) {
	tests := []struct {
		name   string
		params any
	}{
		{"tool call", protocol.ToolCallParams{Handle: "h1", Args: map[string]any{"name": "Ada <&>", "n": 3.0, "l": []any{true, nil, 1.5}},
			Kwargs: map[string]any{"task_id": "t"}, DispatchDepth: 2}},
		{"raw", protocol.RawParams(`{"handle":"h","hook":"x","kwargs":{}}`)},
		{"struct", protocol.HookCallParams{Handle: "h", Hook: "pre_tool_call", Kwargs: map[string]any{"a": "\u2028"}}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := new(Transport).AppendRequest([]byte("prefix"), 42, "tool.call", tt.params)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := tt.params.(protocol.RawParams)
			if !ok {
				if p, err = jsonx.Marshal(tt.params); err != nil {
					t.Fatal(err)
				}
			}
			want, err := protocol.EncodeMessage(&protocol.Message{JSONRPC: "2.0", ID: []byte("42"), Method: "tool.call", Params: []byte(p)})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix"+string(want) {
				t.Errorf("got  %s\nwant prefix%s", got, want)
			}
		})
	}
	if _, err := new(Transport).AppendRequest(nil, 1, "m", make(chan int)); err == nil {
		t.Error("params that cannot be encoded were framed")
	}
}
