package mdstream

import "testing"

func TestListItem(t *testing.T) {
	cases := []struct {
		line         string
		ok, ordered  bool
		num, content int
	}{
		{"- a", true, false, 0, 2},
		{"  * a", true, false, 0, 4},
		{"+   a", true, false, 0, 4},
		{"1. a", true, true, 1, 3},
		{"12) a", true, true, 12, 4},
		{"-", true, false, 0, 2}, // an empty item
		{"- ", true, false, 0, 2},
		{"-a", false, false, 0, 0},
		{"1.a", false, false, 0, 0},
		{"1234567890. a", false, false, 0, 0},
		{"-      code", true, false, 0, 2}, // 5+ spaces: indented code in the item
		{"text", false, false, 0, 0},
	}
	for _, c := range cases {
		it, ok := listItem(c.line)
		if ok != c.ok || (ok && (it.ordered != c.ordered || it.num != c.num || it.content != c.content)) {
			t.Errorf("listItem(%q) = %+v, %v; want ok=%v ordered=%v num=%d content=%d", c.line, it, ok, c.ok, c.ordered, c.num, c.content)
		}
	}
}

func TestLineKinds(t *testing.T) {
	cases := []struct {
		line                        string
		heading, brk, setext, quote bool
		fence                       bool
		lang                        string
	}{
		{"# a", true, false, false, false, false, ""},
		{"#a", false, false, false, false, false, ""},
		{"####### a", false, false, false, false, false, ""},
		{"    # a", false, false, false, false, false, ""},
		{"---", false, true, true, false, false, ""},
		{"- - -", false, true, false, false, false, ""},
		{"===", false, false, true, false, false, ""},
		{"> q", false, false, false, true, false, ""},
		{"```go", false, false, false, false, true, "go"},
		{"~~~ python extra", false, false, false, false, true, "python"},
		{"``` a`b", false, false, false, false, false, ""},
		{"``", false, false, false, false, false, ""},
	}
	for _, c := range cases {
		f, isFence := openFence(c.line)
		if isHeading(c.line) != c.heading || isBreak(c.line) != c.brk || isSetext(c.line) != c.setext ||
			isQuote(c.line) != c.quote || isFence != c.fence || f.lang != c.lang {
			t.Errorf("%q: heading=%v break=%v setext=%v quote=%v fence=%v lang=%q", c.line,
				isHeading(c.line), isBreak(c.line), isSetext(c.line), isQuote(c.line), isFence, f.lang)
		}
	}
	f, _ := openFence("````")
	for line, want := range map[string]bool{"````": true, "`````  ": true, "```": false, "~~~~": false, "```` x": false} {
		if f.closes(line) != want {
			t.Errorf("```` closed by %q: %v, want %v", line, !want, want)
		}
	}
}

func TestDelimRow(t *testing.T) {
	for line, want := range map[string]bool{
		"|---|---|": true, "| :-- | --: |": true, "--- | ---": true, "---": false, "| a |": false, "|-x-|": false,
	} {
		if isDelimRow(line) != want {
			t.Errorf("isDelimRow(%q) = %v", line, !want)
		}
	}
}

func TestEscapeAngles(t *testing.T) {
	cases := []struct{ in, want string }{
		{"no angles", "no angles"},
		{"Vec<String>", `Vec\<String>`},
		{"`Vec<String>` and <T>", "`Vec<String>` and \\<T>"},
		{"``a ` <b> ``<c>", "``a ` <b> ``\\<c>"},
		{"`open <x>", "`open \\<x>"},
		{`already \<x>`, `already \<x>`},
		{"<https://example.com/a> <me@example.com> <a b>", "<https://example.com/a> <me@example.com> \\<a b>"},
		{"<div>\nx\n</div>", "\\<div>\nx\n\\</div>"},
	}
	for _, c := range cases {
		if got := escapeAngles(c.in); got != c.want {
			t.Errorf("escapeAngles(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExpandTabs(t *testing.T) {
	for in, want := range map[string]string{"\tx": "    x", "ab\tc": "ab  c", "abcd\te": "abcd    e", "é\tx": "é   x"} {
		if got := expandTabs(in); got != want {
			t.Errorf("expandTabs(%q) = %q, want %q", in, got, want)
		}
	}
}
