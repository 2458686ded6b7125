package hostapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/tools"
)

func TestNormalizeToolResult(t *testing.T) {
	cases := []struct {
		raw, want, wantType string // wantType "" = success with want
	}{
		{`"{\"ok\": true}"`, `{"ok": true}`, ""},
		{`""`, ``, ""},
		{`{"_multimodal":true,"content":[]}`, `{"_multimodal":true,"content":[]}`, ""},
		{`null`, "", "NoneType"},
		{``, "", "NoneType"},
		{`{"ok":true}`, "", "dict"},
		{`{"_multimodal":true,"content":"x"}`, "", "dict"},
		{`[1]`, "", "list"},
		{`true`, "", "bool"},
		{`3`, "", "int"},
		{`1.5`, "", "float"},
		{`{"_hermes_unsupported_result":"bytes"}`, "", "bytes"},
		{`{"_hermes_unsupported_result":"bytes","x":1}`, "", "dict"},
	}
	for _, c := range cases {
		got, err := normalizeToolResult("t", json.RawMessage(c.raw))
		if c.wantType == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: got %q, %v; want %q", c.raw, got, err, c.want)
			}
			continue
		}
		var te *tools.ToolError
		if !errors.As(err, &te) || te.Type != "tool_result_contract" ||
			!strings.HasPrefix(te.Message, "Tool handler returned unsupported result type: "+c.wantType+" (tool t ") {
			t.Errorf("%s: got %q, %v; want a contract error naming %s", c.raw, got, err, c.wantType)
		}
	}
}
