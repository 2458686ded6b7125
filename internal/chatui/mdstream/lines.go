package mdstream

import "strings"

// The line classifiers below know just enough CommonMark to find where a
// top-level block ends; what a block looks like is glamour's business.

// indentOf is the number of leading spaces of l (tabs were expanded already).
func indentOf(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }

// expandTabs replaces tabs by spaces to the next multiple of 4 columns, as
// CommonMark counts indentation, so that widths are known and a tab cannot
// move the cursor to where the terminal, not hermes, decides.
func expandTabs(l string) string {
	if !strings.Contains(l, "\t") {
		return l
	}
	var b strings.Builder
	col := 0
	for _, r := range l {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString("    "[:n])
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// isHeading reports an ATX heading line: up to 3 spaces, 1–6 '#', then a
// space or the end of the line.
func isHeading(l string) bool {
	if indentOf(l) > 3 {
		return false
	}
	t := strings.TrimLeft(l, " ")
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(t) || t[n] == ' ')
}

// isBreak reports a thematic break: 3 or more of one of - * _, spaces between.
func isBreak(l string) bool {
	if indentOf(l) > 3 {
		return false
	}
	var c byte
	n := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case ' ':
		case '-', '*', '_':
			if c != 0 && l[i] != c {
				return false
			}
			c = l[i]
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// isSetext reports a setext underline (=== or ---), which makes the
// paragraph above it a heading.
func isSetext(l string) bool {
	if indentOf(l) > 3 {
		return false
	}
	t := strings.TrimSpace(l)
	return t != "" && (strings.Trim(t, "=") == "" || strings.Trim(t, "-") == "")
}

// fence is an opening code fence.
type fence struct {
	char   byte   // '`' or '~'
	n      int    // how many
	indent int    // removed from the content lines
	lang   string // the first word of the info string
}

// openFence parses l as an opening fence.
func openFence(l string) (fence, bool) {
	ind := indentOf(l)
	if ind > 3 {
		return fence{}, false
	}
	t := l[ind:]
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return fence{}, false
	}
	c := t[0]
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return fence{}, false
	}
	info := strings.TrimSpace(t[n:])
	if c == '`' && strings.Contains(info, "`") {
		return fence{}, false
	}
	lang, _, _ := strings.Cut(info, " ")
	return fence{char: c, n: n, indent: ind, lang: lang}, true
}

// closes reports whether l closes f.
func (f fence) closes(l string) bool {
	ind := indentOf(l)
	if ind > 3 {
		return false
	}
	t := strings.TrimRight(l[ind:], " ")
	if len(t) < f.n {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != f.char {
			return false
		}
	}
	return true
}

// content is a code line with the fence's indentation removed.
func (f fence) content(l string) string {
	ind := min(indentOf(l), f.indent)
	return l[ind:]
}

func isQuote(l string) bool {
	return indentOf(l) <= 3 && strings.HasPrefix(strings.TrimLeft(l, " "), ">")
}

// item is a list item's marker line.
type item struct {
	indent  int  // spaces before the marker
	content int  // the column the item's content starts at
	ordered bool // 1. or 1) rather than - * +
	delim   byte // the bullet, or '.' / ')' after the number
	num     int  // the number of an ordered item
	numEnd  int  // where the number ends in the line

	renumbered bool // num is the number to show (a tail's guess), not the source's
}

// listItem parses l as a list item's first line.
func listItem(l string) (item, bool) {
	ind := indentOf(l)
	t := l[ind:]
	it := item{indent: ind}
	var w int // the marker's width
	switch {
	case t == "":
		return item{}, false
	case t[0] == '-' || t[0] == '*' || t[0] == '+':
		it.delim, w = t[0], 1
	default:
		d := 0
		for d < len(t) && d < 9 && t[d] >= '0' && t[d] <= '9' {
			it.num = it.num*10 + int(t[d]-'0')
			d++
		}
		if d == 0 || d == len(t) || (t[d] != '.' && t[d] != ')') {
			return item{}, false
		}
		it.ordered, it.delim, it.numEnd, w = true, t[d], ind+d, d+1
	}
	rest := t[w:]
	if rest != "" && rest[0] != ' ' {
		return item{}, false
	}
	sp := indentOf(rest)
	if sp == 0 || sp > 4 || sp == len(rest) {
		sp = 1 // an empty item, or indented code inside it
	}
	it.content = ind + w + sp
	return it, true
}

// sameList reports whether b continues the list a started.
func (a item) sameList(b item) bool { return a.ordered == b.ordered && a.delim == b.delim }

// isDelimRow reports a table's delimiter row (| --- | :-: |).
func isDelimRow(l string) bool {
	t := strings.TrimSpace(l)
	if !strings.Contains(t, "-") {
		return false
	}
	cells := strings.Split(strings.Trim(t, "|"), "|")
	if len(cells) == 1 && !strings.Contains(t, "|") {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// escapeAngles puts a backslash before each '<' outside code spans and
// autolinks. glamour drops raw HTML, and in a model's prose a '<' is far
// more often Vec<String> or a <placeholder> than markup: shown as text it
// is what the model wrote.
func escapeAngles(src string) string {
	if !strings.Contains(src, "<") {
		return src
	}
	var b strings.Builder
	b.Grow(len(src) + 8)
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '\\' && i+1 < len(src):
			b.WriteString(src[i : i+2]) // an escape already: keep both bytes
			i += 2
		case c == '`':
			n := 0
			for i+n < len(src) && src[i+n] == '`' {
				n++
			}
			if end := closingTicks(src[i+n:], n); end >= 0 {
				b.WriteString(src[i : i+n+end+n]) // a code span is literal
				i += n + end + n
			} else {
				b.WriteString(src[i : i+n])
				i += n
			}
		case c == '<' && !isAutolink(src[i:]):
			b.WriteString(`\<`)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closingTicks is where a run of exactly n backticks starts in s, or -1.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// isAutolink reports whether s starts with <scheme:...> or <user@host>.
func isAutolink(s string) bool {
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return false
	}
	in := s[1:end]
	if in == "" || strings.ContainsAny(in, " <\n") {
		return false
	}
	if scheme, _, ok := strings.Cut(in, ":"); ok && len(scheme) >= 2 {
		for _, r := range scheme {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-') {
				return false
			}
		}
		return true
	}
	return strings.Contains(in, "@")
}

// textTabs is expandTabs for a line outside code: the indentation is
// expanded by columns (it decides what the line is), a tab after it becomes
// four spaces wherever it stands, so that a paragraph cut mid-line (see
// para.go) gives the same text as when it is not.
func textTabs(l string) string {
	if !strings.Contains(l, "\t") {
		return l
	}
	ind := len(l) - len(strings.TrimLeft(l, " \t"))
	return expandTabs(l[:ind]) + strings.ReplaceAll(l[ind:], "\t", "    ")
}
