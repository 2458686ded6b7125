package agent

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The model's arguments reach the tool with their numbers as written.
func TestParseArgsKeepsNumbers(t *testing.T) {
	tests := []struct {
		raw  string
		want map[string]any
		err  bool
	}{
		{raw: `{"i": 3, "f": 1.0, "big": 12345678901234567890, "e": 1e400}`,
			want: map[string]any{"i": int64(3), "f": json.Number("1.0"), "big": json.Number("12345678901234567890"), "e": json.Number("1e400")}},
		{raw: `  `, want: map[string]any{}},
		{raw: `{"a": 1} {"b": 2}`, err: true},
		{raw: `[1]`, err: true},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.raw)
		if (err != nil) != tt.err {
			t.Errorf("parseArgs(%q) error = %v, want error %v", tt.raw, err, tt.err)
			continue
		}
		if !tt.err && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseArgs(%q) = %#v, want %#v", tt.raw, got, tt.want)
		}
	}
}
