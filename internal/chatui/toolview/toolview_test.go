package toolview

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hermes-go/hermes/internal/tools/builtin"
)

// evil is what a hostile model or tool might send: a screen clear, a title
// change, a bidi override, a C1 CSI.
const evil = "\x1b[2J\x1b]0;pwned\x07\u202e\u009b31m"

// both renders f without and with colour, for one golden file that shows both.
func both(f func(color bool) string) string {
	return "-- plain --\n" + f(false) + "\n-- color --\n" + f(true) + "\n"
}

// checkSafe fails if out is wider than width anywhere, carries an escape
// sequence the input smuggled in, or any escape at all without colour.
func checkSafe(t *testing.T, out string, width int, color bool) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if width > 0 && ansi.StringWidth(l) > width {
			t.Errorf("line wider than %d columns (%d): %q", width, ansi.StringWidth(l), l)
		}
	}
	for _, bad := range []string{"\x1b[2J", "\x1b]", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(out, bad) {
			t.Errorf("output carries %q raw: %q", bad, out)
		}
	}
	if !color && strings.Contains(out, "\x1b") {
		t.Errorf("output without colour has an escape sequence: %q", out)
	}
}

func TestBuiltinNames(t *testing.T) {
	for got, want := range map[string]string{toolTerminal: builtin.Terminal, toolReadFile: builtin.ReadFile,
		toolWriteFile: builtin.WriteFile, toolPatch: builtin.Patch} {
		if got != want {
			t.Errorf("toolview knows the tool %q, the built-in is now %q", got, want)
		}
	}
}

func TestHeader(t *testing.T) {
	tests := []struct {
		name  string
		call  Call
		width int
		frame string
	}{
		{"running", Call{Name: "terminal", Args: `{"command":"go test ./..."}`}, 80, "⠋"},
		{"running_elapsed", Call{Name: "terminal", Args: `{"command":"sleep 100"}`, Duration: 83 * time.Second}, 80, "⠙"},
		{"done", Call{Name: "terminal", Args: `{"command":"ls -la","timeout":30}`, Done: true, Duration: 420 * time.Millisecond}, 80, ""},
		{"failed", Call{Name: "read_file", Args: `{"path":"/etc/shadow"}`, Done: true, Err: "permission denied", Duration: 2*time.Minute + 3*time.Second}, 80, ""},
		{"blocked", Call{Name: "terminal", Args: `{"command":"rm -rf /"}`, Done: true, Blocked: true, Err: "BLOCKED: denied"}, 80, ""},
		{"pairs_cut_at_40", Call{Name: "web_search", Args: `{"query":"how to write a terminal diff viewer","limit":5,"safe":true}`, Done: true, Duration: time.Second}, 40, ""},
		{"wide_chars", Call{Name: "translate", Args: `{"text":"日本語のテキストをたくさん翻訳する","to":"en"}`, Done: true}, 40, ""},
		{"escapes_in_args", Call{Name: "terminal", Args: `{"command":"echo ` + jsonEscape(evil) + `\nnext line"}`, Done: true}, 60, ""},
		{"not_json", Call{Name: "mystery", Args: "not json at all", Done: true}, 40, ""},
		{"no_args", Call{Name: "list_skills", Args: `{}`, Done: true, Duration: 1500 * time.Millisecond}, 40, ""},
		{"exit_code_fails", Call{Name: "terminal", Args: `{"command":"false"}`, Done: true, Result: `{"output": "", "exit_code": 1, "error": null}`}, 40, ""},
		{"tool_error_result", Call{Name: "plugin_tool", Done: true, Result: `{"error": "quota exceeded"}`}, 40, ""},
		{"blocked_by_result", Call{Name: "terminal", Args: `{"command":"rm -rf ~"}`, Done: true, Result: `{"output": "", "exit_code": -1, "error": "BLOCKED: denied", "status": "blocked"}`}, 40, ""},
		{"tiny_width", Call{Name: "a_tool_with_a_long_name", Args: `{"x":1}`, Done: true, Duration: time.Hour + 5*time.Minute}, 12, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := both(func(color bool) string {
				h := Header(tt.call, tt.width, tt.frame, color)
				checkSafe(t, h, tt.width, color)
				if strings.Contains(h, "\n") {
					t.Errorf("header is more than one line: %q", h)
				}
				return h
			})
			golden.RequireEqual(t, out)
		})
	}
}

func TestSummaryAndExpanded(t *testing.T) {
	long := strings.Repeat("a line of output that goes on\n", 60)
	tests := []struct {
		name  string
		call  Call
		width int
	}{
		{"terminal_one_line", Call{Name: "terminal", Done: true, Result: `{"output": "hello\n", "exit_code": 0, "error": null}`}, 40},
		{"terminal_many_lines", Call{Name: "terminal", Done: true, Result: `{"output": ` + jsonQuote(long) + `, "exit_code": 0, "error": null}`}, 40},
		{"terminal_exit_code", Call{Name: "terminal", Done: true, Result: `{"output": "FAIL: TestX\nexit status 1\n", "exit_code": 1, "error": null}`}, 40},
		{"terminal_no_output", Call{Name: "terminal", Done: true, Result: `{"output": "", "exit_code": 0, "error": null}`}, 40},
		{"terminal_blocked", Call{Name: "terminal", Done: true, Blocked: true, Err: "BLOCKED: the user denied it", Result: `{"output": "", "exit_code": -1, "error": "BLOCKED: the user denied it", "status": "blocked"}`}, 40},
		{"error", Call{Name: "read_file", Done: true, Err: "File not found: nope.txt\n(similar: none)", Result: `{"error": "File not found: nope.txt"}`}, 40},
		{"read_file", Call{Name: "read_file", Done: true, Result: `{"content": "1|package main\n2|\n3|func main() {}", "total_lines": 3, "file_size": 29, "truncated": false}`}, 40},
		{"other_json", Call{Name: "write_file", Done: true, Result: `{"bytes_written": 12, "dirs_created": false}`}, 40},
		{"plain_text", Call{Name: "plugin_tool", Done: true, Result: "a plain answer from a plugin\twith a tab"}, 40},
		{"escapes", Call{Name: "plugin_tool", Done: true, Result: "before " + evil + " after\r\nsecond line"}, 40},
		{"wide_chars_wrap", Call{Name: "plugin_tool", Done: true, Result: "日本語のテキストがとても長いのでこの行は折り返されるはずです。そして次の文。"}, 20},
		{"running", Call{Name: "terminal"}, 40},
		{"terminal_timeout", Call{Name: "terminal", Done: true, Result: `{"output": "partial output\n", "exit_code": 124, "error": "Command timed out after 180s"}`}, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := both(func(color bool) string {
				s := Summary(tt.call, tt.width, color)
				checkSafe(t, s, tt.width, color)
				if strings.Contains(s, "\n") {
					t.Errorf("summary is more than one line: %q", s)
				}
				e := Expanded(tt.call, tt.width, color)
				checkSafe(t, e, tt.width, color)
				return "summary: " + s + "\nexpanded:\n" + e
			})
			golden.RequireEqual(t, out)
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.0s"}, {40 * time.Millisecond, "0.0s"}, {420 * time.Millisecond, "0.4s"}, {12 * time.Second, "12.0s"},
		{59960 * time.Millisecond, "1m00s"}, {2*time.Minute + 3*time.Second, "2m03s"}, {time.Hour + 5*time.Minute, "1h05m"},
		{-time.Second, "0.0s"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.d); got != tt.want {
			t.Errorf("FormatDuration(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func jsonQuote(s string) string {
	return `"` + jsonEscape(s) + `"`
}

// jsonEscape escapes s for the inside of a JSON string literal.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
