package mdstream

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// After SetWidth the tail, the open code block and later blocks are drawn at
// the new width; what was returned before keeps the old one.
func TestSetWidth(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, tt := range []struct {
		name, before, after string
	}{
		{"paragraph", long + "\n\n", long},
		{"open paragraph", "", long},
		{"open code", "```\n", strings.Repeat("x", 70) + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{Width: 80})
			early := s.Write(tt.before)
			s.SetWidth(40)
			got := s.Write(tt.after)
			tail := s.Tail()
			got = append(got, s.Close()...)
			if tail == "" && len(got) == 0 {
				t.Fatal("nothing rendered after the resize")
			}
			for _, l := range append(strings.Split(tail, "\n"), got...) {
				if w := ansi.StringWidth(l); w > 40 {
					t.Errorf("a line after the resize is %d wide: %q", w, l)
				}
			}
			for _, l := range early {
				if w := ansi.StringWidth(l); w <= 40 && strings.Count(l, "word") > 0 {
					t.Errorf("a line returned before the resize changed width: %q", l)
				}
			}
		})
	}
}
