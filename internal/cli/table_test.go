package cli

import (
	"strings"
	"testing"
)

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", 80)
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  padded  ", 10, "padded"},
		{"two\nlines", 20, "two lines"},
		{"exactly ten", 11, "exactly ten"},
		{"one two three four", 10, "one two..."},
		{long, 10, strings.Repeat("é", 7) + "..."},
		{strings.Repeat("é", 10), 10, strings.Repeat("é", 10)},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "\x1b[1mbold\x1b[0m": "bold", "": ""} {
		if got := stripANSI(in); got != want {
			t.Errorf("stripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
