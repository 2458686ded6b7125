package config

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Byte offsets of lines and tokens in the source, and the spans of nodes: where
// every edit splices.

// indexTokens records where every lexer token starts. Offsets come from matching each
// token's text against the source in order, because the parser's columns do not count
// tabs; the column is only the fallback. The content of a block scalar (| or >) is left
// out of the start list and its header instead records where the next token after the
// content begins.
func (d *Doc) indexTokens() {
	tks := lexer.Tokenize(string(d.src))
	d.at = map[[2]int]int{}
	d.litEnd = map[int]int{}
	offs := make([]int, len(tks))
	cur := 0
	for i, tk := range tks {
		o := -1
		p := cur
		for p < len(d.src) && (isSpace(d.src[p]) || bytes.HasPrefix(d.src[p:], bom)) {
			if d.src[p] == bom[0] {
				p += len(bom)
			} else {
				p++
			}
		}
		raw := strings.Trim(tk.Origin, " \t\r\n")
		switch {
		case tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType:
			// The lexer's Origin of a quoted scalar with escapes is not the source text.
			if end := quotedEnd(d.src, p); end > p {
				o, cur = p, end
			}
		case raw != "" && bytes.HasPrefix(d.src[p:], []byte(raw)):
			o, cur = p, p+len(raw)
		}
		if o < 0 {
			o = d.offByColumn(tk)
			if o >= cur {
				cur = o + len(raw)
			}
		}
		offs[i] = o
		if tk.Position != nil {
			key := [2]int{tk.Position.Line, tk.Position.Column}
			if _, dup := d.at[key]; !dup {
				d.at[key] = o
			}
		}
	}
	for i := 0; i < len(tks); i++ {
		d.toks = append(d.toks, offs[i])
		if tks[i].Type != token.LiteralType && tks[i].Type != token.FoldedType {
			continue
		}
		j := i + 1
		for j < len(tks) && tks[j].Type == token.CommentType {
			d.toks = append(d.toks, offs[j])
			j++
		}
		if j < len(tks) && tks[j].Type == token.StringType {
			j++ // the content
		}
		end := len(d.src)
		if j < len(tks) {
			end = offs[j]
		}
		d.litEnd[offs[i]] = end
		i = j - 1
	}
	sort.Ints(d.toks)
	d.toks = dedupe(d.toks)
}

// quotedEnd returns the offset just past the quoted scalar starting at src[p], or -1.
func quotedEnd(src []byte, p int) int {
	if p >= len(src) || (src[p] != '"' && src[p] != '\'') {
		return -1
	}
	q := src[p]
	for i := p + 1; i < len(src); i++ {
		switch {
		case q == '"' && src[i] == '\\':
			i++ // skip the escaped character
		case src[i] == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			i++ // '' is an escaped quote
		case src[i] == q:
			return i + 1
		}
	}
	return -1
}

func dedupe(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (d *Doc) indexLines() {
	d.lines = []int{0}
	for i, c := range d.src {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
}

// off returns the byte offset where tk starts in the source.
func (d *Doc) off(tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return 0 // never expected; a wrong offset is caught when the edit is verified
	}
	if o, ok := d.at[[2]int{tk.Position.Line, tk.Position.Column}]; ok {
		return o
	}
	return d.offByColumn(tk)
}

// offByColumn converts a token position (1-based line and column, counted in characters)
// to a byte offset; columns past the end of the line clamp to the line end.
func (d *Doc) offByColumn(tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return 0
	}
	p := tk.Position
	if p.Line < 1 {
		return 0
	}
	if p.Line > len(d.lines) {
		return len(d.src)
	}
	i := d.lines[p.Line-1]
	end := d.lineEnd(i)
	for n := 1; n < p.Column && i < end; n++ {
		_, size := utf8.DecodeRune(d.src[i:])
		i += size
	}
	return i
}

func (d *Doc) lineStart(o int) int {
	i := sort.SearchInts(d.lines, o+1) - 1
	if i < 0 {
		return 0
	}
	return d.lines[i]
}

// lineEnd is the offset where the line holding o ends, before "\n" or "\r\n".
func (d *Doc) lineEnd(o int) int {
	i := o
	for i < len(d.src) && d.src[i] != '\n' {
		i++
	}
	if i < len(d.src) && i > o && d.src[i-1] == '\r' {
		i--
	}
	return i
}

// nextLine is the offset just past the newline ending the line holding o.
func (d *Doc) nextLine(o int) int {
	if i := bytes.IndexByte(d.src[o:], '\n'); i >= 0 {
		return o + i + 1
	}
	return len(d.src)
}

func (d *Doc) col(o int) int { return o - d.lineStart(o) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// eachToken visits the tokens that make up n's text, skipping comments and the invented
// token of an implicit (empty) null.
func (d *Doc) eachToken(n ast.Node, fn func(*token.Token)) {
	visit := func(tk *token.Token) {
		if tk != nil {
			fn(tk)
		}
	}
	switch x := n.(type) {
	case nil:
	case *ast.CommentGroupNode, *ast.CommentNode:
	case *ast.NullNode:
		if !d.implicitNull(x) {
			visit(x.Token)
		}
	case *ast.MappingNode:
		if x.IsFlowStyle {
			visit(x.Start)
			visit(x.End)
		}
		for _, v := range x.Values {
			d.eachToken(v, fn)
		}
	case *ast.MappingValueNode:
		d.eachToken(x.Key, fn)
		visit(x.Start)
		d.eachToken(x.Value, fn)
	case *ast.MappingKeyNode:
		visit(x.Start)
		d.eachToken(x.Value, fn)
	case *ast.SequenceNode:
		visit(x.Start)
		if x.IsFlowStyle {
			visit(x.End)
		}
		for _, e := range x.Entries {
			visit(e.Start)
		}
		for _, v := range x.Values {
			d.eachToken(v, fn)
		}
	case *ast.AnchorNode:
		visit(x.Start)
		d.eachToken(x.Name, fn)
		d.eachToken(x.Value, fn)
	case *ast.AliasNode:
		visit(x.Start)
		d.eachToken(x.Value, fn)
	case *ast.TagNode:
		visit(x.Start)
		d.eachToken(x.Value, fn)
	case *ast.LiteralNode:
		visit(x.Start) // the content's extent comes from litEnd, see indexTokens
	default:
		visit(n.GetToken())
	}
}

// implicitNull reports whether n stands for an absent value ("key:" with nothing after
// it): the parser invents a token for it that does not exist in the source.
func (d *Doc) implicitNull(n *ast.NullNode) bool {
	if n.Token == nil {
		return true
	}
	o := d.off(n.Token)
	return n.Token.Value == "" || !bytes.HasPrefix(d.src[o:], []byte(n.Token.Value))
}

// span returns the byte range [start, end) of n's text without surrounding comments or
// whitespace; ok is false when n has no text at all.
func (d *Doc) span(n ast.Node) (start, end int, ok bool) {
	start, last := -1, -1
	d.eachToken(n, func(tk *token.Token) {
		o := d.off(tk)
		if start < 0 || o < start {
			start = o
		}
		if o > last {
			last = o
		}
	})
	if start < 0 {
		return 0, 0, false
	}
	return start, d.endAfter(last), true
}

// endAfter finds where the token starting at o ends: just before the next token (or the
// end of the file), minus the whitespace in between. Using the lexer's own token starts
// avoids re-deriving the length of quoted, folded or multi-line scalars.
func (d *Doc) endAfter(o int) int {
	e := len(d.src)
	if le, ok := d.litEnd[o]; ok {
		e = le
	} else if i := sort.SearchInts(d.toks, o+1); i < len(d.toks) {
		e = d.toks[i]
	}
	for e > o+1 && isSpace(d.src[e-1]) {
		e--
	}
	return e
}

func (d *Doc) startOf(n ast.Node) int {
	s, _, _ := d.span(n)
	return s
}
