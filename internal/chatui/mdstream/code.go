package mdstream

import (
	"image/color"
	"strings"
	"sync"

	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	xansi "github.com/charmbracelet/x/ansi"
)

// codeIndent is where code lines start: glamour's document margin plus its
// code block margin, so fenced code looks as glamour would draw it.
const codeIndent = "    "

// Code in a fence is highlighted a line at a time, each line as it completes:
// a 400-line block then costs one line per delta, not the whole block. The
// price is that a construct spanning lines (a block comment, a docstring) is
// coloured as code after its first line; the lines are still exact.

var (
	chromaOnce  sync.Once
	chromaStyle *chroma.Style
)

// codeStyle is the chroma style made of glamour's dark theme's code colours,
// so fenced code here has the colours glamour gives code elsewhere.
func codeStyle() *chroma.Style {
	chromaOnce.Do(func() {
		c := styles.DarkStyleConfig.CodeBlock.Chroma
		e := chroma.StyleEntries{
			chroma.Text: entry(c.Text), chroma.Error: entry(c.Error),
			chroma.Comment: entry(c.Comment), chroma.CommentPreproc: entry(c.CommentPreproc),
			chroma.Keyword: entry(c.Keyword), chroma.KeywordReserved: entry(c.KeywordReserved),
			chroma.KeywordNamespace: entry(c.KeywordNamespace), chroma.KeywordType: entry(c.KeywordType),
			chroma.Operator: entry(c.Operator), chroma.Punctuation: entry(c.Punctuation),
			chroma.Name: entry(c.Name), chroma.NameBuiltin: entry(c.NameBuiltin),
			chroma.NameTag: entry(c.NameTag), chroma.NameAttribute: entry(c.NameAttribute),
			chroma.NameClass: entry(c.NameClass), chroma.NameConstant: entry(c.NameConstant),
			chroma.NameDecorator: entry(c.NameDecorator), chroma.NameException: entry(c.NameException),
			chroma.NameFunction: entry(c.NameFunction), chroma.NameOther: entry(c.NameOther),
			chroma.Literal: entry(c.Literal), chroma.LiteralNumber: entry(c.LiteralNumber),
			chroma.LiteralDate: entry(c.LiteralDate), chroma.LiteralString: entry(c.LiteralString),
			chroma.LiteralStringEscape: entry(c.LiteralStringEscape),
			chroma.GenericDeleted:      entry(c.GenericDeleted), chroma.GenericEmph: entry(c.GenericEmph),
			chroma.GenericInserted: entry(c.GenericInserted), chroma.GenericStrong: entry(c.GenericStrong),
			chroma.GenericSubheading: entry(c.GenericSubheading),
		}
		for k, v := range e {
			if v == "" {
				delete(e, k)
			}
		}
		s, err := chroma.NewStyle("hermes-dark", e)
		if err != nil {
			s = chroma.MustNewStyle("hermes-plain", chroma.StyleEntries{})
		}
		chromaStyle = s
	})
	return chromaStyle
}

// entry is a glamour style primitive in chroma's style notation ("#hex bold").
func entry(p ansi.StylePrimitive) string {
	var parts []string
	if p.Color != nil {
		parts = append(parts, *p.Color)
	}
	if p.BackgroundColor != nil {
		parts = append(parts, "bg:"+*p.BackgroundColor)
	}
	for _, f := range []struct {
		on   *bool
		name string
	}{{p.Bold, "bold"}, {p.Italic, "italic"}, {p.Underline, "underline"}} {
		if f.on != nil && *f.on {
			parts = append(parts, f.name)
		}
	}
	return strings.Join(parts, " ")
}

// highlighter colours the lines of one fence.
type highlighter struct {
	lexer chroma.Lexer // nil: no colour
	width int
}

func newHighlighter(lang string, width int, color bool) *highlighter {
	h := &highlighter{width: width}
	if color {
		l := lexers.Get(lang)
		if l == nil || lang == "" {
			l = lexers.Fallback
		}
		h.lexer = chroma.Coalesce(l)
	}
	return h
}

// lines renders one source line of code: highlighted, indented, and cut at
// the width (code keeps its line breaks, so a long line is folded, not
// re-flowed).
func (h *highlighter) lines(src string) []string {
	out := src
	if h.lexer != nil && strings.TrimSpace(src) != "" {
		if it, err := h.lexer.Tokenise(nil, src); err == nil {
			out = format(it)
		}
	}
	limit := max(h.width-len(codeIndent), 8)
	if xansi.StringWidth(out) <= limit {
		return []string{tidyCode(out, h.lexer != nil)}
	}
	parts := strings.Split(xansi.Hardwrap(out, limit, true), "\n")
	for i, p := range parts {
		parts[i] = tidyCode(p, h.lexer != nil)
	}
	return parts
}

// tidyCode indents a code line; a coloured one ends with a reset so that a
// colour the wrap cut cannot run into the next line.
func tidyCode(l string, color bool) string {
	l = strings.TrimRight(l, " ")
	if l == "" {
		return ""
	}
	if color && strings.Contains(l, "\x1b[") {
		return codeIndent + l + "\x1b[m"
	}
	return codeIndent + l
}

// sgrs caches the SGR sequence of each token type: a style lookup and a
// colour conversion per token would be most of a line's cost.
var sgrs sync.Map // chroma.TokenType → string

// format writes tokens as text in their colours. chroma's own 256-colour
// formatter picks between equally near palette entries by map order, so the
// same line could come out in two colours; ansi.Convert256 is deterministic.
func format(it chroma.Iterator) string {
	var b strings.Builder
	cur := ""
	for tok := it(); tok != chroma.EOF; tok = it() {
		text := strings.ReplaceAll(tok.Value, "\n", "")
		if text == "" {
			continue
		}
		sgr := sgrFor(tok.Type)
		if sgr != cur {
			if cur != "" {
				b.WriteString("\x1b[m")
			}
			b.WriteString(sgr)
			cur = sgr
		}
		b.WriteString(text)
	}
	if cur != "" {
		b.WriteString("\x1b[m")
	}
	return b.String()
}

func sgrFor(t chroma.TokenType) string {
	if v, ok := sgrs.Load(t); ok {
		return v.(string)
	}
	e := codeStyle().Get(t)
	var st xansi.Style
	if e.Colour.IsSet() {
		c := color.RGBA{R: e.Colour.Red(), G: e.Colour.Green(), B: e.Colour.Blue(), A: 0xff}
		st = st.ForegroundColor(xansi.Convert256(c))
	}
	if e.Bold == chroma.Yes {
		st = st.Bold()
	}
	if e.Italic == chroma.Yes {
		st = st.Italic(true)
	}
	if e.Underline == chroma.Yes {
		st = st.Underline(true)
	}
	sgr := ""
	if len(st) > 0 {
		sgr = st.String()
	}
	sgrs.Store(t, sgr)
	return sgr
}
