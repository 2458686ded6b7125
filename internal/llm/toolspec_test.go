package llm

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestToolSpecEncodedMatchesMarshal(t *testing.T) {
	for _, sp := range []ToolSpec{
		{Name: "terminal", Description: "run <a> command & see", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"}}},
		{Name: "noargs"},
	} {
		want, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(sp.Encoded())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s encoded once: %s\nencoded each time: %s", sp.Name, got, want)
		}
		// A request carries the cached form as it would the fresh one.
		req, _ := json.Marshal(map[string]any{"tools": []ToolSpec{sp.Encoded()}})
		fresh, _ := json.Marshal(map[string]any{"tools": []ToolSpec{sp}})
		if string(req) != string(fresh) {
			t.Errorf("in a request: %s, want %s", req, fresh)
		}
	}
}

// A request whose tools were encoded once says what it says with them
// encoded per request: the same JSON document.
func TestRequestBodyWithEncodedTools(t *testing.T) {
	tools := []ToolSpec{
		{Name: "terminal", Description: "run a command", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}}}},
		{Name: "noargs"},
	}
	encoded := make([]ToolSpec, len(tools))
	for i, sp := range tools {
		encoded[i] = sp.Encoded()
	}
	temp := 0.5
	c := &client{cfg: Config{Model: "m"}}
	for _, stream := range []bool{false, true} {
		req := Request{Messages: []Message{{Role: "user", Content: "hi <there> & you"}}, Temperature: &temp,
			Extra: map[string]any{"tools": "not these", "provider": map[string]any{"order": []any{"a"}}}}
		req.Tools = tools
		want, err := c.body(req, stream)
		if err != nil {
			t.Fatal(err)
		}
		req.Tools = encoded
		got, err := c.body(req, stream)
		if err != nil {
			t.Fatal(err)
		}
		var w, g map[string]any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("spliced body is not JSON: %v\n%s", err, got)
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("stream=%v:\nspliced  %s\nper call %s", stream, got, want)
		}
	}
}
