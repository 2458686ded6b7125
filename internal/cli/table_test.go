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

// A cell from outside hermes cannot carry an escape sequence into the table, nor
// throw the columns out; hermes' own colours are painted after.
func TestTableCellsAreSafe(t *testing.T) {
	var b strings.Builder
	tb := &table{color: true}
	tb.header("Name", "Status")
	tb.row("evil\x1b[2J\x1b]0;t\x07", "enabled")
	tb.paintLast(1, statusColour("enabled"))
	tb.row("ok", "x")
	tb.write(&b)
	want := "\x1b[1mName\x1b[0m                     \x1b[1mStatus\x1b[0m\n" +
		`evil\x1b[2J\x1b]0;t\x07` + "  \x1b[32menabled\x1b[0m\n" +
		"ok                       x\n"
	if got := b.String(); got != want {
		t.Errorf("table:\n%q\nwant\n%q", got, want)
	}
}
