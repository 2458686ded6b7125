// Package yamlfast decodes the everyday subset of YAML that plugin manifests
// and config files are written in, an order of magnitude faster than the
// general parser, and declines everything else.
//
// It is a second YAML parser, kept only because it saves a 200-plugin `hermes
// plugins list` ~15 ms per run (docs/DESIGN.md, "One YAML parser where
// possible"), and internal to the
// manifest package so that nothing else grows a dependency on it; the config
// package reaches it through manifest.DecodeFastYAML.
package yamlfast

import (
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/token"
)

// The fast decoder handles the shape nearly every plugin.yaml has — block
// mappings and sequences, plain and simply-quoted scalars, one-line flow
// sequences of scalars — in a single pass without building a token stream.
// `hermes plugins list` parses every installed manifest, and the general YAML
// parser costs an order of magnitude more per file.
//
// The contract is strict: for any input it either declines (ok == false) or
// returns exactly what the general decoder (goccy/go-yaml) returns for it.
// Anything unusual — anchors, tags, block scalars, escapes, multi-line
// scalars, flow mappings, tabs, document markers — declines, and the caller
// falls back to the general decoder. The manifest package's
// FuzzFastDecodeAgrees and the config package's FuzzParseSimpleAgrees check the
// contract against the two general readers.

type fastLine struct {
	indent int
	text   string // content after the indentation; never empty, never a comment
	num    int    // 1-based line number
}

type fastParser struct {
	lines []fastLine
	pos   int
}

// Decoded is what the decoder (and, for the same input, the general one) produces
// for one document.
type Decoded struct {
	Doc map[string]any
	// Lit holds the source text of top-level scalars that did not decode to a
	// string (version: 1.10 decodes to the float 1.1, but means "1.10").
	Lit  map[string]string
	Dups []Dup
}

// Dup is a top-level key given more than once; the last one wins.
type Dup struct {
	Key         string
	First, Last int // line numbers
}

// Decode decodes src, or declines (false) when it is outside the subset.
func Decode(src string) (Decoded, bool) {
	if !Enabled {
		return Decoded{}, false
	}
	p := fastParser{}
	if !p.split(src) {
		return Decoded{}, false
	}
	out := Decoded{Doc: map[string]any{}}
	if len(p.lines) == 0 {
		return out, true
	}
	first := p.lines[0]
	if isSeqItem(first.text) {
		return Decoded{}, false
	}
	var ok bool
	out.Doc, ok = p.parseMap(first.indent, &out)
	if !ok || p.pos != len(p.lines) {
		return Decoded{}, false
	}
	return out, true
}

// split cuts src into logical lines, dropping blank and comment-only lines.
func (p *fastParser) split(src string) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if (c < 0x20 && c != '\n') || c == 0x7f {
			return false // tabs, CR, control characters: leave them to the full parser
		}
	}
	if !utf8.ValidString(src) {
		return false
	}
	p.lines = make([]fastLine, 0, strings.Count(src, "\n")+1)
	num := 0
	for len(src) > 0 {
		num++
		var ln string
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			ln, src = src[:i], src[i+1:]
		} else {
			ln, src = src, ""
		}
		indent := 0
		for indent < len(ln) && ln[indent] == ' ' {
			indent++
		}
		text := ln[indent:]
		if text == "" || text[0] == '#' {
			continue
		}
		if indent == 0 && (strings.HasPrefix(text, "---") || strings.HasPrefix(text, "...") || text[0] == '%') {
			return false // document markers and directives
		}
		p.lines = append(p.lines, fastLine{indent: indent, text: text, num: num})
	}
	return true
}

func isSeqItem(t string) bool {
	return t == "-" || strings.HasPrefix(t, "- ")
}

func (p *fastParser) parseMap(indent int, top *Decoded) (map[string]any, bool) {
	var m map[string]any
	if top != nil {
		m = make(map[string]any, len(p.lines)) // every line a key, at most
	} else {
		m = map[string]any{}
	}
	for p.pos < len(p.lines) {
		ln := p.lines[p.pos]
		if ln.indent < indent {
			break
		}
		if ln.indent > indent {
			return nil, false
		}
		if isSeqItem(ln.text) {
			if top != nil {
				return nil, false
			}
			break // the next item of the enclosing sequence
		}
		key, rest, ok := splitKey(ln.text)
		if !ok {
			return nil, false
		}
		p.pos++
		var v any
		var lit string
		if rest == "" || rest[0] == '#' {
			if p.pos < len(p.lines) {
				nx := p.lines[p.pos]
				switch {
				case nx.indent > indent:
					if isSeqItem(nx.text) {
						v, ok = p.parseSeq(nx.indent)
					} else {
						v, ok = p.parseMap(nx.indent, nil)
					}
				case nx.indent == indent && isSeqItem(nx.text):
					v, ok = p.parseSeq(indent)
				}
				if !ok {
					return nil, false
				}
			}
		} else {
			v, lit, ok = parseInline(rest)
			if !ok || (p.pos < len(p.lines) && p.lines[p.pos].indent > indent) {
				return nil, false // a continuation line: multi-line scalar or worse
			}
		}
		if top != nil {
			if lit != "" {
				if top.Lit == nil {
					top.Lit = map[string]string{}
				}
				top.Lit[key] = lit
			} else {
				delete(top.Lit, key) // a later duplicate replaced it
			}
			if _, seen := m[key]; seen {
				top.Dups = append(top.Dups, Dup{Key: key, First: p.firstKeyLine(key, indent), Last: ln.num})
			}
		}
		m[key] = v
	}
	return m, true
}

// firstKeyLine finds the line of key's first occurrence at indent (duplicate
// keys are rare, so they are looked up again rather than tracked).
func (p *fastParser) firstKeyLine(key string, indent int) int {
	for _, ln := range p.lines {
		if ln.indent == indent {
			if k, _, ok := splitKey(ln.text); ok && k == key {
				return ln.num
			}
		}
	}
	return 0
}

func (p *fastParser) parseSeq(indent int) ([]any, bool) {
	var out []any
	for p.pos < len(p.lines) {
		ln := p.lines[p.pos]
		if ln.indent < indent {
			break
		}
		if ln.indent > indent {
			return nil, false
		}
		if !isSeqItem(ln.text) {
			break // a key of the enclosing mapping (compact sequence)
		}
		rest := ln.text[1:]
		sp := 0
		for sp < len(rest) && rest[sp] == ' ' {
			sp++
		}
		rest = rest[sp:]
		if rest == "" || rest[0] == '#' || isSeqItem(rest) {
			return nil, false // null or nested items: rare, leave them to the full parser
		}
		if _, _, isKey := splitKey(rest); isKey {
			// "- key: v" opens a mapping whose keys align with "key".
			col := indent + 1 + sp
			p.lines[p.pos] = fastLine{indent: col, text: rest, num: ln.num}
			m, ok := p.parseMap(col, nil)
			if !ok {
				return nil, false
			}
			out = append(out, m)
			continue
		}
		p.pos++
		v, _, ok := parseInline(rest)
		if !ok || (p.pos < len(p.lines) && p.lines[p.pos].indent > indent) {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// splitKey splits "key: rest" for a plain key made of identifier characters.
func splitKey(t string) (key, rest string, ok bool) {
	i := 0
	for i < len(t) {
		c := t[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || (i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.')) {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(t) || t[i] != ':' || (i+1 < len(t) && t[i+1] != ' ') {
		return "", "", false
	}
	key = t[:i]
	if _, reserved := plainKeyword(key); reserved {
		return "", "", false // true:, null: and friends are not string keys
	}
	rest = strings.TrimLeft(t[i+1:], " ")
	return key, rest, true
}

// parseInline decodes a value that sits on the same line as its key or dash.
// lit is the source text when the value is a non-string plain scalar.
func parseInline(s string) (v any, lit string, ok bool) {
	switch s[0] {
	case '"':
		return parseDoubleQuoted(s)
	case '\'':
		return parseSingleQuoted(s)
	case '[':
		return parseFlowSeq(s)
	case '{':
		t := strings.TrimLeft(s[1:], " ")
		if !strings.HasPrefix(t, "}") || !endOfValue(t[1:], false) {
			return nil, "", false
		}
		return map[string]any{}, "", true
	case '&', '*', '!', '|', '>', '%', '@', '`', '?', ':', ',', ']', '}', '-', '#':
		return nil, "", false
	}
	text := s
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimRight(text, " ")
	if strings.Contains(text, ": ") || strings.HasSuffix(text, ":") {
		return nil, "", false
	}
	v, ok = resolvePlain(text)
	if !ok {
		return nil, "", false
	}
	if _, isString := v.(string); !isString && v != nil {
		lit = text
	}
	return v, lit, true
}

// endOfValue reports whether rest (what follows a closed scalar) holds only
// spaces and, when at least one space precedes it, a comment.
func endOfValue(rest string, needSpace bool) bool {
	t := strings.TrimLeft(rest, " ")
	if t == "" {
		return true
	}
	return t[0] == '#' && (len(t) < len(rest) || !needSpace)
}

func parseDoubleQuoted(s string) (any, string, bool) {
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return nil, "", false // continues on the next line
	}
	body := s[1 : 1+end]
	if strings.IndexByte(body, '\\') >= 0 || !endOfValue(s[2+end:], true) {
		return nil, "", false // escapes: the full parser knows them all
	}
	return body, "", true
}

func parseSingleQuoted(s string) (any, string, bool) {
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return nil, "", false
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		break
	}
	if !endOfValue(s[i:], true) {
		return nil, "", false
	}
	return b.String(), "", true
}

// parseFlowSeq decodes a one-line "[a, 'b', 1]" of scalars.
func parseFlowSeq(s string) (any, string, bool) {
	out := []any{}
	i := 1
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, "", false
		}
		if s[i] == ']' {
			if len(out) > 0 {
				return nil, "", false // "[a, ]": a trailing comma
			}
			i++
			break
		}
		var v any
		switch s[i] {
		case '"', '\'':
			q := s[i]
			j := strings.IndexByte(s[i+1:], q)
			if j < 0 {
				return nil, "", false
			}
			body := s[i+1 : i+1+j]
			if q == '"' && strings.IndexByte(body, '\\') >= 0 {
				return nil, "", false
			}
			if q == '\'' && i+2+j < len(s) && s[i+2+j] == '\'' {
				return nil, "", false // '' escape inside a flow item
			}
			v = body
			i += j + 2
		default:
			j := i
			for j < len(s) && s[j] != ',' && s[j] != ']' {
				switch s[j] {
				case '[', '{', '}', '#', ':', '"', '\'', '&', '*', '!', '|', '>', '%', '@', '`', '?':
					return nil, "", false
				}
				j++
			}
			text := strings.TrimRight(s[i:j], " ")
			if text == "" || text[0] == '-' || text[0] == '.' {
				return nil, "", false
			}
			var ok bool
			if v, ok = resolvePlain(text); !ok {
				return nil, "", false
			}
			i = j
		}
		out = append(out, v)
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, "", false
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] != ']' {
			return nil, "", false
		}
		i++
		break
	}
	if !endOfValue(s[i:], true) {
		return nil, "", false
	}
	return out, "", true
}

// plainKeyword resolves the YAML 1.2 core-schema words the general decoder
// gives a non-string meaning. ok is false for words this decoder leaves to it.
func plainKeyword(text string) (v any, reserved bool) {
	switch text {
	case "null", "Null", "NULL", "~":
		return nil, true
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	case ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return nil, true
	}
	return nil, false
}

func resolvePlain(text string) (any, bool) {
	if v, reserved := plainKeyword(text); reserved {
		if strings.HasPrefix(text, ".") || strings.HasPrefix(text, "-.") {
			return nil, false // infinities and NaN: rare, let the full parser decide
		}
		return v, true
	}
	c := text[0]
	if c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' || c == '_' {
		// Same number rules as the general decoder, which calls this too.
		if num := token.ToNumber(text); num != nil {
			return num.Value, true
		}
	}
	return text, true
}
