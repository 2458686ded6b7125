package llm

import (
	"encoding/json"
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
