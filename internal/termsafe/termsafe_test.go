package termsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineTextColour(t *testing.T) {
	tests := []struct {
		name              string
		in                string
		line, text, color string
	}{
		{name: "plain ASCII", in: "hello world", line: "hello world", text: "hello world", color: "hello world"},
		{name: "valid UTF-8 kept", in: "naïve 日本語 🙂 e\u0301 \ufffd", line: "naïve 日本語 🙂 e\u0301 \ufffd",
			text: "naïve 日本語 🙂 e\u0301 \ufffd", color: "naïve 日本語 🙂 e\u0301 \ufffd"},
		{name: "newline and tab", in: "a\tb\nc", line: `a\tb\nc`, text: "a\tb\nc", color: `a` + "\t" + `b\nc`},
		{name: "CRLF passes as a line end in text", in: "a\r\nb", line: `a\r\nb`, text: "a\r\nb", color: `a\r\nb`},
		{name: "lone CR overwrites: escaped", in: "rm -rf ~\rls", line: `rm -rf ~\rls`, text: `rm -rf ~\rls`, color: `rm -rf ~\rls`},
		{name: "CR at the end", in: "x\r", line: `x\r`, text: `x\r`, color: `x\r`},
		{name: "erase line and cursor up (CSI)", in: "\x1b[2K\x1b[1Aok", line: `\x1b[2K\x1b[1Aok`, text: `\x1b[2K\x1b[1Aok`, color: `\x1b[2K\x1b[1Aok`},
		{name: "clear screen", in: "\x1b[H\x1b[2J", line: `\x1b[H\x1b[2J`, text: `\x1b[H\x1b[2J`, color: `\x1b[H\x1b[2J`},
		{name: "window title (OSC, BEL)", in: "\x1b]0;pwned\x07", line: `\x1b]0;pwned\x07`, text: `\x1b]0;pwned\x07`, color: `\x1b]0;pwned\x07`},
		{name: "OSC 8 link (ST)", in: "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
			line: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`, text: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`,
			color: `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`},
		{name: "DCS", in: "\x1bP1$r\x1b\\", line: `\x1bP1$r\x1b\`, text: `\x1bP1$r\x1b\`, color: `\x1bP1$r\x1b\`},
		{name: "SGR colour", in: "\x1b[1;31mred\x1b[0m", line: `\x1b[1;31mred\x1b[0m`, text: `\x1b[1;31mred\x1b[0m`,
			color: "\x1b[1;31mred\x1b[0m\x1b[0m"},
		{name: "SGR with colon sub-parameters", in: "\x1b[38:2::1:2:3mx", line: `\x1b[38:2::1:2:3mx`, text: `\x1b[38:2::1:2:3mx`,
			color: "\x1b[38:2::1:2:3mx\x1b[0m"},
		{name: "conceal is colour, closed at the line end", in: "\x1b[8mhidden", line: `\x1b[8mhidden`, text: `\x1b[8mhidden`,
			color: "\x1b[8mhidden\x1b[0m"},
		{name: "a CSI that is not SGR", in: "\x1b[2;5H", line: `\x1b[2;5H`, text: `\x1b[2;5H`, color: `\x1b[2;5H`},
		{name: "unterminated ESC", in: "end\x1b", line: `end\x1b`, text: `end\x1b`, color: `end\x1b`},
		{name: "other C0 and DEL", in: "\x00\x07\x08\x7f", line: `\x00\x07\x08\x7f`, text: `\x00\x07\x08\x7f`, color: `\x00\x07\x08\x7f`},
		{name: "C1 CSI and OSC", in: "\u009b2J\u009d0;t\u009c", line: `\u009b2J\u009d0;t\u009c`, text: `\u009b2J\u009d0;t\u009c`, color: `\u009b2J\u009d0;t\u009c`},
		{name: "bidi override (Trojan Source)", in: "access\u202e \u2066// check\u2069\u2067", line: `access\u202e \u2066// check\u2069\u2067`,
			text: `access\u202e \u2066// check\u2069\u2067`, color: `access\u202e \u2066// check\u2069\u2067`},
		{name: "every bidi control", in: "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
			line:  `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`,
			text:  `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`,
			color: `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{name: "line separators", in: "a\u2028b\u2029", line: `a\u2028b\u2029`, text: `a\u2028b\u2029`, color: `a\u2028b\u2029`},
		{name: "invalid bytes escaped", in: "a\xffb\xc3(\x9b2J", line: `a\xffb\xc3(\x9b2J`, text: `a\xffb\xc3(\x9b2J`, color: `a\xffb\xc3(\x9b2J`},
		{name: "a truncated rune at the end", in: "ok\xe2\x80", line: `ok\xe2\x80`, text: `ok\xe2\x80`, color: `ok\xe2\x80`},
		{name: "a backslash stays single", in: `C:\path\x1b`, line: `C:\path\x1b`, text: `C:\path\x1b`, color: `C:\path\x1b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := Colour(tt.in); got != tt.color {
				t.Errorf("Colour(%q) = %q, want %q", tt.in, got, tt.color)
			}
			for _, out := range []string{Line(tt.in), Text(tt.in)} {
				if bad := obeyed(out); bad != "" {
					t.Errorf("output %q still carries %s", out, bad)
				}
				if !utf8.ValidString(out) {
					t.Errorf("output %q is not valid UTF-8", out)
				}
			}
		})
	}
}

// obeyed names the first thing in s a terminal would act on, other than a
// newline, a tab or a CRLF, or "".
func obeyed(s string) string {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r == '\r' && strings.HasPrefix(s[i:], "\r\n"):
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return "a control character"
		case escapedRune(r):
			return "a bidi control"
		}
	}
	return ""
}

// The clean case costs no copy: the usual name or description is printed as it is.
func TestCleanStringIsNotCopied(t *testing.T) {
	s := strings.Repeat("plain text, 日本語, 🙂; ", 4)
	if n := testing.AllocsPerRun(100, func() { _ = Line(s); _ = Text(s); _ = Colour(s) }); n != 0 {
		t.Errorf("%v allocations for clean text, want 0", n)
	}
}

// However a stream is cut into writes, the Writer writes what Text of the whole
// gives: an escape sequence, a UTF-8 character or a CRLF split between two
// pieces is neither let through nor garbled.
func TestWriterSplitAnywhere(t *testing.T) {
	streams := []string{
		"Sure.\x1b[2J\x1b[H done",
		"conceal \x1b[8m then \x1b]0;title\x07 and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
		"bidi \u202e reversed \u2066 isolated \u2069 end",
		"日本語 🙂 naïve \u009b2J",
		"line one\r\nline two\r\n\rline three\r",
		"bad \xff bytes \xe2\x80 cut",
		"\r",
		"\xf0\x9f",
	}
	for _, s := range streams {
		want := Text(s)
		for cut := 0; cut <= len(s); cut++ {
			for cut2 := cut; cut2 <= len(s); cut2++ {
				var out bytes.Buffer
				w := NewWriter(&out)
				for _, piece := range []string{s[:cut], s[cut:cut2], s[cut2:]} {
					if n, err := w.WriteString(piece); err != nil || n != len(piece) {
						t.Fatalf("Write(%q) = %d, %v", piece, n, err)
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if got := out.String(); got != want {
					t.Fatalf("%q cut at %d and %d: wrote %q, want %q", s, cut, cut2, got, want)
				}
			}
		}
	}
}

// A piece that is one byte at a time, the way a slow stream may come.
func TestWriterByteAtATime(t *testing.T) {
	s := "a\u202eb\x1b[31mc\r\nd🙂"
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := 0; i < len(s); i++ {
		if _, err := w.Write([]byte{s[i]}); err != nil {
			t.Fatal(err)
		}
		if bad := obeyed(out.String()); bad != "" {
			t.Fatalf("after %d bytes the output %q carries %s", i+1, out.String(), bad)
		}
	}
	_ = w.Flush()
	if got, want := out.String(), Text(s); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsErrors(t *testing.T) {
	w := NewWriter(failWriter{})
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("a failed write reported no error")
	}
}

// JSON output stays JSON that decodes to the same values; only what a terminal
// would obey is written as \u escapes, by JSON's own rules.
func TestJSON(t *testing.T) {
	values := []string{
		"plain",
		"esc \x1b[2J bell \x07 nl \n tab \t",
		"c1 \u009b2J del \x7f",
		"bidi \u202e\u2066\u2069 seps \u2028\u2029",
		"日本語 🙂 \\x1b",
	}
	for _, v := range values {
		enc, err := json.Marshal(map[string]string{"name": v})
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(enc)
		if bad := obeyed(string(got)); bad != "" {
			t.Errorf("JSON(%s) = %s still carries %s", enc, got, bad)
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("JSON(%s) = %s is not JSON: %v", enc, got, err)
		}
		if back["name"] != v {
			t.Errorf("JSON(%s) decodes to %q, want %q", enc, back["name"], v)
		}
	}
	indented := []byte("{\n\t\"a\": \"b\"\n}\n")
	if got := JSON(indented); !bytes.Equal(got, indented) {
		t.Errorf("JSON changed clean indented JSON: %q", got)
	}
	var out bytes.Buffer
	w := NewJSONWriter(&out)
	for _, piece := range []string{`{"a": "\u00`, "\xc2", "\x9b", `x"}`} {
		_, _ = w.WriteString(piece)
	}
	_ = w.Flush()
	if got, want := out.String(), `{"a": "\u00\u009bx"}`; got != want {
		t.Errorf("JSON writer wrote %q, want %q", got, want)
	}
}

func BenchmarkLineClean(b *testing.B) {
	s := "a plugin description of ordinary length, with a name and a version 1.2.3"
	for b.Loop() {
		_ = Line(s)
	}
}

func BenchmarkTextDirty(b *testing.B) {
	s := strings.Repeat("text \x1b[31m with \u202e escapes\n", 20)
	for b.Loop() {
		_ = Text(s)
	}
}
