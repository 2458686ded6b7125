package mdstream

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// The documents the tests render, one per markdown feature.
var docs = []struct{ name, md string }{
	{"headings", "# One\n\nText under one.\n## Two\nText under two.\n### Three\n\nSetext\n======\n\nAnd more\n---\n"},
	{"lists", "Steps:\n\n1. first\n1. second, which is long enough to wrap at forty columns\n   - nested a\n   - nested b\n1. third\n\n- tight a\n- tight b\n\n* loose a\n\n* loose b\n  continued\n\n- [ ] task\n- [x] done\n"},
	{"emphasis", "Some *emphasis*, some **strong**, ***both***, ~~struck~~ and `inline code` in one line.\n"},
	{"links", "See [the docs](https://example.com/docs) or <https://example.org> and a bare https://example.net/x.\n"},
	{"table", "| name | value | note |\n|------|------:|:----:|\n| alpha | 1 | first |\n| beta | 22 | second one |\n"},
	{"code_go", "Here:\n```go\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```\nDone.\n"},
	{"code_python", "```python\ndef add(a, b):\n    \"\"\"Add.\"\"\"\n    return a + b  # sum\n\nprint(add(1, 2))\n```\n"},
	{"code_unknown", "~~~nosuchlang\nsome <text> here\n  indented\n~~~\n\n```\nno language\n```\n"},
	{"blockquote", "> A quote that goes on long enough to wrap around at forty columns.\n> Second line.\nlazy line\n\n> another\n"},
	{"wide", "中文的段落，足够长以便在四十列处换行，每个字符占两列宽度。😀 emoji 🎉 too.\n\n- 列表项目：宽字符也要正确换行对齐的一个例子\n\n```text\n代码行里的中文字符也很宽，也很宽，也很宽，也很宽\n```\n"},
}

func TestGolden(t *testing.T) {
	for _, d := range docs {
		for _, color := range []bool{false, true} {
			name := d.name + "/plain"
			if color {
				name = d.name + "/color"
			}
			t.Run(name, func(t *testing.T) {
				o := Options{Width: 40, Color: color}
				out := Render(d.md, o)
				checkLines(t, out, o)
				golden.RequireEqual(t, out+"\n")
			})
		}
	}
}

// checkLines fails on a line wider than the width, on any escape sequence
// in plain mode, and on anything but SGR with colour.
func checkLines(t *testing.T, out string, o Options) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > o.Width {
			t.Errorf("line %d is %d columns wide (width %d): %q", i, w, o.Width, l)
		}
	}
	if bad := unsafeSequence(out, o.Color); bad != "" {
		t.Errorf("output carries %q:\n%q", bad, out)
	}
}

// unsafeSequence is the first escape sequence or control character in s that
// is not allowed: with colour only SGR (ESC [ digits ; m), without none.
func unsafeSequence(s string, color bool) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			if !color {
				return s[i:min(len(s), i+8)]
			}
			j := i + 2
			if j > len(s) || s[i+1] != '[' {
				return s[i:min(len(s), i+8)]
			}
			for j < len(s) && (s[j] == ';' || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				return s[i:min(len(s), j+1)]
			}
			i = j + 1
			continue
		case r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError:
			return string(r)
		}
		i += n
	}
	return ""
}

// stream writes the pieces and returns every final line, Close's included.
func stream(o Options, pieces ...string) []string {
	s := New(o)
	var lines []string
	for _, p := range pieces {
		lines = append(lines, s.Write(p)...)
		_ = s.Tail()
	}
	return append(lines, s.Close()...)
}

// A message cut anywhere gives the lines it gives in one piece: what is final
// does not depend on how the deltas fell.
func TestSplitAtEveryOffset(t *testing.T) {
	md := "Intro with é and 中文.\n\n```go\nfunc f() {\n\treturn // x\n}\n```\n- a\n- b\n\n```python\nx = 1\r\ny = 2\n```\nend"
	for _, color := range []bool{false, true} {
		o := Options{Width: 40, Color: color}
		want := strings.Join(stream(o, md), "\n")
		for i := 0; i <= len(md); i++ {
			got := strings.Join(stream(o, md[:i], md[i:]), "\n")
			if differs(got, want, func() (string, string) {
				return strings.Join(stream(o, md[:i], md[i:]), "\n"), strings.Join(stream(o, md), "\n")
			}) {
				t.Fatalf("color=%v cut at %d (%q | %q):\n got %q\nwant %q", color, i, md[:i], md[i:], got, want)
			}
		}
	}
}

// Every document, cut into random pieces many times, gives its Render.
func TestRandomDeltas(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 17))
	for _, d := range docs {
		for _, color := range []bool{false, true} {
			o := Options{Width: 40, Color: color}
			want := Render(d.md, o)
			for range 30 {
				var pieces []string
				for rest := d.md; rest != ""; {
					n := min(len(rest), 1+rng.IntN(12))
					pieces = append(pieces, rest[:n])
					rest = rest[n:]
				}
				if got := strings.Join(stream(o, pieces...), "\n"); differs(got, want, func() (string, string) {
					return strings.Join(stream(o, pieces...), "\n"), Render(d.md, o)
				}) {
					t.Fatalf("%s color=%v pieces %q:\n got %q\nwant %q", d.name, color, pieces, got, want)
				}
			}
		}
	}
}

// Lines of an open fence are final as they complete; the fence's partial
// line is the tail.
func TestOpenFenceLinesAreFinal(t *testing.T) {
	s := New(Options{Width: 40})
	if got := s.Write("```go\nx := 1\ny :"); strings.Join(got, "|") != "    x := 1" {
		t.Fatalf("final lines = %q, want the first code line", got)
	}
	if got := s.Tail(); got != "    y :" {
		t.Fatalf("tail = %q", got)
	}
	if got := s.Write("= 2\n"); strings.Join(got, "|") != "    y := 2" {
		t.Fatalf("final lines = %q", got)
	}
	if got := s.Write("```\nafter"); len(got) != 0 {
		t.Fatalf("closing the fence gave %q", got)
	}
	if got := s.Tail(); got != "\n  after" {
		t.Fatalf("tail after the fence = %q", got)
	}
}

func TestBlocksBecomeFinal(t *testing.T) {
	o := Options{Width: 40}
	cases := []struct {
		name, md   string
		final      []string // what Write returns
		tail       string
		afterClose []string
	}{
		{"open paragraph", "Hello wor", nil, "  Hello wor", []string{"  Hello wor"}},
		{"paragraph ends at a blank line", "Hello.\n\nNext", []string{"  Hello."}, "\n  Next", []string{"", "  Next"}},
		{"heading is final at its newline", "# Title\nText", []string{"  # Title"}, "\n  Text", []string{"", "  Text"}},
		{"item waits for the next item", "- a\n- b\n", []string{"  • a"}, "  • b", []string{"  • b"}},
		{"partial marker line", "- a\n- b", nil, "  • a\n  • b", []string{"  • a", "  • b"}},
		{"ordered items are renumbered", "1. a\n1. b\n1. c\n", []string{"  1. a", "  2. b"}, "  3. c", []string{"  3. c"}},
		{"loose items are spaced", "- a\n\n- b\n", []string{"  • a"}, "\n  • b", []string{"", "  • b"}},
		{"a blank line in an item may continue", "- a\n\n  more\n", nil, "  • a\n\n    more", []string{"  • a", "", "    more"}},
		{"paragraph then list", "Items:\n- a\n", []string{"  Items:"}, "\n  • a", []string{"", "  • a"}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n", nil,
			"   a                | b\n  ------------------|-----------------\n   1                | 2",
			[]string{"   a                | b", "  ------------------|-----------------", "   1                | 2"}},
		{"quote with lazy line", "> a\nb\n\nc", []string{"  > a b"}, "\n  c", []string{"", "  c"}},
		{"CRLF", "a\r\n\r\nb\r\n", []string{"  a"}, "\n  b", []string{"", "  b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(o)
			if got := s.Write(c.md); strings.Join(got, "\n") != strings.Join(c.final, "\n") {
				t.Errorf("Write = %q, want %q", got, c.final)
			}
			if got := s.Tail(); got != c.tail {
				t.Errorf("Tail = %q, want %q", got, c.tail)
			}
			if got := s.Close(); strings.Join(got, "\n") != strings.Join(c.afterClose, "\n") {
				t.Errorf("Close = %q, want %q", got, c.afterClose)
			}
			if got := s.Tail(); got != "" {
				t.Errorf("Tail after Close = %q", got)
			}
		})
	}
}

// Escape sequences and controls from the model never reach the output raw,
// wherever they are: prose, inline code, a link, a fence, the open tail.
func TestSanitised(t *testing.T) {
	evil := "title\x1b]0;pwned\x07 clear\x1b[2J link \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ c1\u009b31m\u009d0;x\u009c bell\x07 bidi\u202e"
	md := "# H " + evil + "\n\n" + evil + " `" + evil + "` [x](https://e.example/\x1b[2J) \n\n- " + evil + "\n\n```go\n" + evil + "\n```\n> " + evil + "\n\n" + evil
	for _, color := range []bool{false, true} {
		o := Options{Width: 40, Color: color}
		s := New(o)
		var all []string
		for i := 0; i < len(md); i += 7 {
			all = append(all, s.Write(md[i:min(len(md), i+7)])...)
			if bad := unsafeSequence(s.Tail(), color); bad != "" {
				t.Fatalf("color=%v: tail carries %q: %q", color, bad, s.Tail())
			}
		}
		all = append(all, s.Close()...)
		out := strings.Join(all, "\n")
		if bad := unsafeSequence(out, color); bad != "" {
			t.Fatalf("color=%v: output carries %q:\n%q", color, bad, out)
		}
		for _, shown := range []string{`\x1b]0;pwned\x07`, `\x1b[2J`, `\u009b31m`, `\u202e`} {
			if !strings.Contains(ansi.Strip(out), shown) {
				t.Errorf("color=%v: %q is not shown escaped in\n%s", color, shown, ansi.Strip(out))
			}
		}
		if r := Render(md, o); unsafeSequence(r, color) != "" {
			t.Errorf("color=%v: Render carries %q", color, unsafeSequence(r, color))
		}
		if r := Reasoning(md, o); unsafeSequence(r, color) != "" {
			t.Errorf("color=%v: Reasoning carries %q", color, unsafeSequence(r, color))
		}
	}
}

// Without colour there is no ANSI at all, and the markdown still reads.
func TestPlainHasNoANSI(t *testing.T) {
	var md strings.Builder
	for _, d := range docs {
		md.WriteString(d.md + "\n")
	}
	o := Options{Width: 40}
	s := New(o)
	var all []string
	for _, piece := range strings.SplitAfter(md.String(), " ") {
		all = append(all, s.Write(piece)...)
		if strings.ContainsAny(s.Tail(), "\x1b\u009b") {
			t.Fatalf("tail has ANSI: %q", s.Tail())
		}
	}
	out := strings.Join(append(all, s.Close()...), "\n")
	if strings.ContainsAny(out, "\x1b\u009b") {
		t.Fatalf("plain output has ANSI:\n%q", out)
	}
	for _, want := range []string{"# One", "**strong**", "`inline code`", "1. first", "2. second", "• tight a", "func main() {", "> A quote"} {
		if !strings.Contains(out, want) {
			t.Errorf("plain output lacks %q", want)
		}
	}
	if strings.ContainsAny(Reasoning("thinking *hard*", o), "\x1b") {
		t.Error("plain reasoning has ANSI")
	}
}

// Every line fits the width, at 40 columns and after a resize, wide
// characters included; a resize re-renders the same text.
func TestWidths(t *testing.T) {
	var md strings.Builder
	for _, d := range docs {
		md.WriteString(d.md + "\n")
	}
	md.WriteString("```go\nvar s = \"" + strings.Repeat("长", 60) + strings.Repeat("x", 90) + "\"\n```\n")
	md.WriteString(strings.Repeat("word ", 40) + strings.Repeat("🎉", 50) + " " + strings.Repeat("y", 120) + "\n")
	for _, w := range []int{40, 57, 100} {
		for _, color := range []bool{false, true} {
			o := Options{Width: w, Color: color}
			out := Render(md.String(), o)
			checkLines(t, out, o)
			checkLines(t, Reasoning(md.String(), o), o)
		}
	}
	narrow, wide := Render(docs[0].md+docs[2].md, Options{Width: 40}), Render(docs[0].md+docs[2].md, Options{Width: 100})
	if narrow == wide || ansi.Strip(strings.Join(strings.Fields(narrow), " ")) != ansi.Strip(strings.Join(strings.Fields(wide), " ")) {
		t.Errorf("a resize should re-flow the same words:\n%s\n---\n%s", narrow, wide)
	}
}

func TestReasoning(t *testing.T) {
	text := "I should check the file first.\n\nThen " + strings.Repeat("think ", 12) + "\x1b[31m"
	plain := Reasoning(text, Options{Width: 40})
	want := "  I should check the file first.\n\n  Then think think think think think\n  think think think think think think\n  think \\x1b[31m"
	if plain != want {
		t.Errorf("plain reasoning =\n%q\nwant\n%q", plain, want)
	}
	col := Reasoning(text, Options{Width: 40, Color: true})
	if ansi.Strip(col) != want || !strings.Contains(col, "\x1b[2;3m") {
		t.Errorf("coloured reasoning should be the same text, faint: %q", col)
	}
}

func TestFenceInItem(t *testing.T) {
	md := "1. Run:\n   ```sh\n   make test\n   ```\n2. Then:\n\n   more text\n"
	got := Render(md, Options{Width: 40})
	want := "  1. Run:\n       make test\n  2. Then:\n\n     more text"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// At every byte of a message, the final lines and the tail show what the
// message so far renders to: the tail does not flicker into a shape the
// next delta undoes (blank lines at the end aside).
func TestTailMatchesRender(t *testing.T) {
	trim := func(s string) string { return strings.TrimRight(s, "\n") }
	for _, d := range docs {
		for _, color := range []bool{false, true} {
			o := Options{Width: 40, Color: color}
			s := New(o)
			var final []string
			for i, r := range d.md { // a rune at a time: a split one is held, and Render would show it escaped
				final = append(final, s.Write(string(r))...)
				i += utf8.RuneLen(r) - 1
				shown := final
				if tl := s.Tail(); tl != "" {
					shown = append(shown[:len(shown):len(shown)], strings.Split(tl, "\n")...)
				}
				partial := strings.TrimSpace(d.md[strings.LastIndexByte(d.md[:i+1], '\n')+1 : i+1])
				if partial != "" && (strings.Trim(partial, "`") == "" || strings.Trim(partial, "~") == "") {
					continue // maybe a closing fence: the tail waits for the line's end
				}
				got, want := trim(strings.Join(shown, "\n")), trim(Render(d.md[:i+1], o))
				if differs(got, want, func() (string, string) {
					s := New(o) // the same stream again, to the same rune
					var final []string
					for _, r := range d.md[:i+1] {
						final = append(final, s.Write(string(r))...)
					}
					if tl := s.Tail(); tl != "" {
						final = append(final, strings.Split(tl, "\n")...)
					}
					return trim(strings.Join(final, "\n")), trim(Render(d.md[:i+1], o))
				}) {
					t.Fatalf("%s color=%v after %q:\n got %q\nwant %q", d.name, color, d.md[:i+1], got, want)
				}
			}
		}
	}
}

// Deep nesting from the model is drawn, bounded, and stays within the width.
func TestDeepNesting(t *testing.T) {
	for _, md := range []string{
		strings.Repeat("- ", 3000) + "x\n",
		strings.Repeat("> ", 3000) + "x\n",
		strings.Repeat("1. ", 2000) + "x\n",
	} {
		o := Options{Width: 40, Color: true}
		out := Render(md, o)
		if !strings.Contains(ansi.Strip(out), "x") {
			t.Errorf("the text is lost: %q", out)
		}
		if bad := unsafeSequence(out, true); bad != "" {
			t.Errorf("output carries %q", bad)
		}
	}
}

// A paragraph that never ends is cut into final parts as it streams, at
// places that depend on the text only, so the open block stays small.
func TestLongParagraph(t *testing.T) {
	var md strings.Builder
	for i := range 50 {
		fmt.Fprintf(&md, "Sentence %d has `code. with a dot` and **bold. across** and\ta [link. text](https://e.example/%d). ", i, i)
	}
	md.WriteString("\n\nSecond paragraph with soft breaks.\n")
	for i := range 40 {
		fmt.Fprintf(&md, "Line %d of the second paragraph goes on. And on.\n", i)
	}
	src := md.String()
	rng := rand.New(rand.NewPCG(3, 5))
	for _, color := range []bool{false, true} {
		o := Options{Width: 60, Color: color}
		want := Render(src, o)
		checkLines(t, want, o)
		if got := strings.Count(ansi.Strip(want), "Sentence "); got != 50 {
			t.Fatalf("%d sentences shown, want 50", got)
		}
		for trial := range 3 {
			s := New(o)
			var lines []string
			for rest := src; rest != ""; {
				n := min(len(rest), 1+rng.IntN(40))
				lines = append(lines, s.Write(rest[:n])...)
				rest = rest[n:]
				_ = s.Tail()
				if open := paraLen(s.block) + s.clean.Len(); open > chunkLimit+200 {
					t.Fatalf("the open paragraph is %d bytes", open)
				}
			}
			lines = append(lines, s.Close()...)
			if got := strings.Join(lines, "\n"); got != want {
				t.Fatalf("color=%v trial %d: streamed output differs from Render:\n got %q\nwant %q", color, trial, got, want)
			}
		}
		for i := 0; i < len(src); i += 61 {
			if got := strings.Join(stream(o, src[:i], src[i:]), "\n"); got != want {
				t.Fatalf("color=%v cut at %d: differs from Render", color, i)
			}
		}
	}
}

// differs reports whether a streamed rendering and Render disagree. chroma
// gives every regular-expression match 250 ms (regexp2's MatchTimeout), and
// on a loaded machine (CI runs all packages under -race at once) a match can
// time out, leaving one token unhighlighted in one of the two. So a mismatch
// is computed once more: a real difference repeats, such a timeout does not.
func differs(got, want string, again func() (got, want string)) bool {
	if got == want {
		return false
	}
	g, w := again()
	return g != w
}
