package chatui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestHangWrap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"fits", "  /usage   tokens", 40, "  /usage   tokens"},
		{"table: under the second column", "  /usage   tokens of the last turn and the session", 40,
			"  /usage   tokens of the last turn and\n           the session"},
		{"second column too far right: under the leading spaces", "  /quit                      leave (also /exit, Ctrl-D)", 40,
			"  /quit                      leave (also\n  /exit, Ctrl-D)"},
		{"prose", "Session: 120 in · 40 out · 160 tokens (1 turn) · cost unknown", 30,
			"Session: 120 in · 40 out · 160\ntokens (1 turn) · cost unknown"},
		{"several lines, each on its own", "a\n  /x   one two three four five six", 20,
			"a\n  /x   one two three\n       four five six"},
		{"no width: as it is", "a b c", 0, "a b c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hangWrap(tc.in, tc.width)
			if got != tc.want {
				t.Fatalf("hangWrap(%q, %d):\n%s\nwant:\n%s", tc.in, tc.width, got, tc.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if tc.width > 0 && ansi.StringWidth(l) > tc.width {
					t.Errorf("a line is %d cells at %d: %q", ansi.StringWidth(l), tc.width, l)
				}
			}
		})
	}
}
