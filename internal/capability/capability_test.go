package capability

import "testing"

func TestGrantedByLegacyKey(t *testing.T) {
	cfg := func(v any) map[string]any {
		return map[string]any{"plugins": map[string]any{"entries": map[string]any{
			"p": map[string]any{"allow_tool_override": v, "llm": map[string]any{"allow_model_override": v}},
		}}}
	}
	tests := []struct {
		value any
		want  bool
	}{
		{true, true},
		{"yes", true}, // PyYAML (YAML 1.1) reads these words as booleans
		{"On", true},
		{false, false},
		{"no", false},
		{"y", false}, // not a boolean to PyYAML
		{1, false},
		{nil, false},
	}
	for _, tt := range tests {
		for _, id := range []string{"tools.override", "llm.model_override"} {
			if got, _ := Granted(cfg(tt.value), "p", id); got != tt.want {
				t.Errorf("Granted(%s) with legacy value %#v = %v, want %v", id, tt.value, got, tt.want)
			}
		}
	}
	if got, _ := Granted(cfg(true), "other", "tools.override"); got {
		t.Error("a grant of one plugin counted for another")
	}
}
