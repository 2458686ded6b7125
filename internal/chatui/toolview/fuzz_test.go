package toolview

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// FuzzRender: whatever a model or tool sends, nothing toolview draws is wider
// than asked, lets an escape sequence through, or has any escape without
// colour; the box is exactly its width on every line.
func FuzzRender(f *testing.F) {
	f.Add("terminal", `{"command":"ls -la"}`, `{"output":"a\nb","exit_code":0,"error":null}`, "", 40, false)
	f.Add("write_file", `{"path":"x","content":"`+jsonEscape(evil)+`"}`, "plain\x1b[31m red", "err\x07", 20, true)
	f.Add("patch", `{"path":"x","old_string":"a","new_string":"b"}`, `{"error":"no \u009b"}`, "", 1, true)
	f.Add("日本", `{"文":"字\t\r\n"}`, "\xff\xfe", "\u202e", 7, false)
	f.Fuzz(func(t *testing.T, name, args, result, errText string, width int, color bool) {
		width %= 120
		if width < 0 {
			width = -width
		}
		width++
		c := Call{Name: name, Args: args, Result: result, Err: errText, Done: len(result)%2 == 0, Duration: time.Duration(len(args)) * time.Second}
		check := func(what, out string, w int, exact bool) {
			for _, l := range strings.Split(out, "\n") {
				lw := ansi.StringWidth(l)
				if lw > w || (exact && lw != w) {
					t.Fatalf("%s: line of %d columns at width %d: %q", what, lw, w, l)
				}
			}
			if !color && strings.Contains(out, "\x1b") {
				t.Fatalf("%s: escape without colour: %q", what, out)
			}
			for _, bad := range []string{"\x07", "\u009b", "\u202e", "\x1b]", "\x1b[2J", "\r"} {
				if strings.Contains(out, bad) {
					t.Fatalf("%s: %q got through: %q", what, bad, out)
				}
			}
		}
		check("header", Header(c, width, "⠋", color), width, false)
		check("summary", Summary(c, width, color), width, false)
		check("expanded", Expanded(c, width, color), width, false)
		read := func(string) ([]byte, error) { return []byte(result), nil }
		if d, ok := Diff("write_file", args, read, width, color); ok {
			check("diff", d, width, false)
		}
		if d, ok := Diff("patch", args, read, width, color); ok {
			check("patch diff", d, width, false)
		}
		mw := max(width, minModalWidth)
		check("modal", ApprovalModal(Approval{Command: args, Description: result, Origin: errText, Choices: []string{name, "deny"}, Selected: width % 3}, mw, color), mw, true)
	})
}
