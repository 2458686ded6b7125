package pluginsdk

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The envelope decodes as the host sends it; an error that is not a string
// keeps its JSON text, and encoding gives the envelope back.
func TestMCPResultJSON(t *testing.T) {
	tests := []struct {
		in   string
		want MCPResult
		back string
	}{
		{`{"ok":true,"result":"hi"}`, MCPResult{OK: true, Result: "hi"}, `{"ok":true,"result":"hi"}`},
		{`{"ok":true,"result":"3","structuredContent":{"sum":3}}`, MCPResult{OK: true, Result: "3", StructuredContent: map[string]any{"sum": 3.0}},
			`{"ok":true,"result":"3","structuredContent":{"sum":3}}`},
		{`{"ok":false,"error":"disk full"}`, MCPResult{Error: "disk full"}, `{"ok":false,"error":"disk full"}`},
		{`{"ok":false,"error":{"code":5}}`, MCPResult{Error: `{"code":5}`}, `{"ok":false,"error":"{\"code\":5}"}`},
		{`{"ok":true,"result":"x… [truncated]","truncated":true}`, MCPResult{OK: true, Result: "x… [truncated]", Truncated: true},
			`{"ok":true,"result":"x… [truncated]","truncated":true}`},
	}
	for _, tt := range tests {
		var got MCPResult
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.in, got, tt.want)
		}
		if b, _ := json.Marshal(got); string(b) != tt.back {
			t.Errorf("%s: encodes as %s, want %s", tt.in, b, tt.back)
		}
	}
}

func TestMCPWait(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: 35 * time.Second, time.Millisecond: 6 * time.Second, time.Hour: 605 * time.Second, 10 * time.Second: 15 * time.Second,
	} {
		if got := MCPWait(in); got != want {
			t.Errorf("MCPWait(%s) = %s, want %s", in, got, want)
		}
	}
}
