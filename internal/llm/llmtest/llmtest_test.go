package llmtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadScript(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
		wantErr    bool
	}{
		{"yaml object", "replies:\n  - content: hi\n  - status: 429\n    retry_after: \"0\"\n  - delay: 250ms\n    content: slow\n", 3, false},
		{"json list", `[{"content":"a"},{"tool_calls":[{"name":"f","arguments":{"x":1}}]}]`, 2, false},
		{"bad duration", "replies:\n  - delay: soon\n", 0, true},
		{"not yaml", "replies: [\n", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s")
			if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadScript(p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if len(got) != tc.want {
				t.Fatalf("%d replies: %+v", len(got), got)
			}
			if tc.name == "yaml object" && (got[1].Status != 429 || got[1].RetryAfter != "0" || time.Duration(got[2].Delay) != 250*time.Millisecond) {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}

func TestPieces(t *testing.T) {
	got := pieces("héllo", 2)
	if len(got) != 3 || got[0] != "hé" || got[2] != "o" {
		t.Errorf("pieces = %q", got)
	}
}
