// Package config owns the user's $HERMES_HOME/config.yaml.
//
// The file belongs to the user: every edit splices new text into the original bytes at
// positions taken from the YAML parse, so comments, blank lines, key order, quoting and
// indentation outside the edited value stay exactly as written. The whole file is never
// re-marshalled from a struct. Each edit is verified by re-parsing the result and comparing
// the decoded document with the intended one; an edit that cannot be made faithfully is
// refused with an error instead of being approximated.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// LatestVersion is the _config_version written into new files and reached by Migrate.
// An existing higher value is never lowered (a newer hermes may have written it).
const LatestVersion = 21

// VersionKey is the top-level key holding the config schema version.
const VersionKey = "_config_version"

// defaultName names a Doc that did not come from a file, in error messages.
const defaultName = "config.yaml"

// Doc is one parsed config file: the user's exact bytes plus what the parse says about
// them. A Doc is not safe for concurrent use; Store.Update serialises writers.
type Doc struct {
	name  string
	src   []byte
	body  ast.Node       // top-level mapping (anchor/tag unwrapped) or nil when empty
	null  ast.Node       // explicit top-level null ("~"), replaced by the first Set
	tree  map[string]any // decoded document, canonical shapes
	lines []int          // byte offset where each line starts
	toks  []int          // sorted byte offsets where lexer tokens start
	// at maps a lexer token's (line, column) to its byte offset.
	at map[[2]int]int
	// litEnd maps a block scalar header's offset to the start of the token after its content.
	litEnd map[int]int
	nl     string // the file's line ending
	// dups are the top-level keys written more than once (the last one wins).
	dups []manifest.DupKey
	// simple: read by the fast decoder; src, tree, name and nl are set and the
	// rest is built by the first edit (see ensureParsed).
	simple bool
	// bom: the file began with a UTF-8 byte order mark. It is kept out of src
	// (a parser would read it into the first key) and written back by Bytes.
	bom bool
}

// ParseError is a YAML syntax or structure problem in a config file.
type ParseError struct {
	File string
	Line int // 0 when the parser gave no position
	Msg  string
	Err  error
}

func (e *ParseError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return fmt.Sprintf("%s: %s (fix the file by hand, or move it aside to start from defaults)", where, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

func yamlError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line, _ := manifest.YAMLErrorPosition(ye.GetMessage(), ye.GetToken())
		return &ParseError{File: file, Line: line, Msg: ye.GetMessage(), Err: err}
	}
	return &ParseError{File: file, Msg: err.Error(), Err: err}
}

// NewDoc returns an empty document (no bytes).
func NewDoc() *Doc {
	return &Doc{name: defaultName, tree: map[string]any{}, nl: "\n", lines: []int{0}}
}

// Parse parses a config file's bytes. filename is used in error messages only.
// The top level must be a mapping (or empty); a file with several YAML documents is
// rejected because upstream Hermes reads exactly one.
func Parse(data []byte, filename string) (*Doc, error) {
	if filename == "" {
		filename = defaultName
	}
	body, bom := bytes.CutPrefix(data, bom)
	d, ok := parseSimple(body, filename)
	if !ok {
		var err error
		if d, err = parseFull(body, filename); err != nil {
			return nil, err
		}
	}
	d.bom = bom
	return d, nil
}

// replace makes d the document nd, keeping what d knows of the file that
// nd, parsed from d's body, cannot (its byte order mark).
func (d *Doc) replace(nd *Doc) {
	bom := d.bom
	*d = *nd
	d.bom = bom
}

// parseFull is Parse with the general parser, and the checks an edit relies on.
func parseFull(data []byte, filename string) (*Doc, error) {
	d, err := parseStable(data, filename)
	if err != nil {
		return nil, err
	}
	if err := d.probe(); err != nil {
		return nil, err
	}
	return d, nil
}

// parseSimple reads a config written in the everyday subset of YAML (block
// mappings, plain and simply quoted scalars, one-line lists; see manifest.DecodeFastYAML)
// without the general parser, which with its checks costs ~0.3 ms warm and
// over 1 ms in a fresh process, on every hermes command, most of which only
// read settings. Anything else declines (false) and takes the full parse.
// What edits need (the syntax tree, token offsets) is built by the first edit.
// FuzzParseSimpleAgrees checks that the full parse accepts whatever this
// accepts, with the same values.
func parseSimple(data []byte, filename string) (*Doc, bool) {
	n := len(data)
	if n == 0 || data[n-1] != '\n' || !utf8.Valid(data) || bareCR(data) >= 0 || indentedTop(data) {
		return nil, false
	}
	dec, ok := manifest.DecodeFastYAML(string(data))
	if !ok {
		return nil, false
	}
	v, err := normalize(dec.Doc, false)
	if err != nil {
		return nil, false
	}
	tree, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return &Doc{name: filename, src: bytes.Clone(data), tree: tree, nl: detectNewline(data), simple: true, dups: dec.Dups}, true
}

// indentedTop reports whether the first setting is indented. The general parser,
// reading comments, rejects a comment left of such a top level, which the fast
// decoder would not notice; hermes and people write the top level at column 0.
func indentedTop(data []byte) bool {
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		t := bytes.TrimLeft(line, " ")
		if len(t) > 0 && t[0] != '#' && t[0] != '\r' {
			return len(t) < len(line)
		}
		data = rest
	}
	return false
}

// ensureParsed builds what an edit needs for a Doc read by parseSimple.
func (d *Doc) ensureParsed() error {
	if !d.simple {
		return nil
	}
	full, err := parseFull(d.src, d.name)
	if err != nil {
		return err
	}
	d.replace(full)
	return nil
}

// parseStable parses data and checks that its meaning does not hinge on a missing final
// line break.
func parseStable(data []byte, filename string) (*Doc, error) {
	d, err := parse(data, filename)
	if err != nil {
		return nil, err
	}
	// The parser reads some constructs differently at the very end of the input than
	// before a line break. A file whose meaning depends on that would change under the
	// next edit, so it must read the same with a final newline added.
	if n := len(data); n > 0 && data[n-1] != '\n' {
		withNL := append(bytes.Clone(data), '\n')
		if fix, ok := d.eofScalarFix(); ok {
			withNL, _ = applySplices(withNL, []splice{fix})
		}
		nd, err := parse(withNL, filename)
		if err != nil {
			return nil, err
		}
		if !equalValues(nd.tree, d.tree) {
			return nil, &ParseError{File: filename, Line: len(d.lines),
				Msg: "the last line reads differently without a final line break; check it and end the file with a newline"}
		}
	}
	return d, nil
}

// probe checks that a setting can be added at the top level. The parser accepts some
// malformed input only while nothing follows it; such a file could never be edited, so it
// is reported now rather than at the first `hermes config set`.
func (d *Doc) probe() error {
	key := "hermes_probe"
	for {
		if _, taken := d.tree[key]; !taken {
			break
		}
		key += "_"
	}
	want := deepCopy(d.tree).(map[string]any)
	want[key] = 0
	for _, edits := range d.withEOFFix(d.planInsert(d.top(), key, 0)) {
		out, err := applySplices(d.src, edits)
		if err != nil {
			continue
		}
		if nd, err := parseStable(out, d.name); err == nil && equalValues(nd.tree, want) {
			return nil
		}
	}
	line := len(d.lines)
	for line > 1 && strings.TrimSpace(string(d.src[d.lines[line-1]:])) == "" {
		line--
	}
	return &ParseError{File: d.name, Line: line,
		Msg: "the YAML here is only accepted while nothing follows it, so no setting could be added; check these lines for stray or misplaced characters"}
}

// eofScalarFix handles a block scalar (| or >) that ends the file without a final line
// break: its value has no trailing newline, but it would gain one as soon as text is added
// after it. Switching its header to strip chomping ("|-") keeps the value as it is.
func (d *Doc) eofScalarFix() (splice, bool) {
	n := len(d.src)
	if n == 0 || d.src[n-1] == '\n' {
		return splice{}, false
	}
	for o, end := range d.litEnd {
		if end != n {
			continue
		}
		i := o + 1
		for i < n && strings.IndexByte("+-0123456789", d.src[i]) >= 0 {
			i++
		}
		hdr := strings.NewReplacer("+", "", "-", "").Replace(string(d.src[o:i]))
		return splice{o, i, hdr + "-"}, true
	}
	return splice{}, false
}

func parse(data []byte, filename string) (*Doc, error) {
	if !utf8.Valid(data) {
		return nil, &ParseError{File: filename, Line: firstBadLine(data), Msg: "the file is not valid UTF-8 text"}
	}
	if i := bareCR(data); i >= 0 {
		return nil, &ParseError{File: filename, Line: bytes.Count(data[:i], []byte("\n")) + 1,
			Msg: "a carriage return without a line feed (old Mac line ending); save the file with \\n or \\r\\n line endings"}
	}
	src := bytes.Clone(data)
	// Duplicate keys are allowed (the last one wins) because upstream's PyYAML reads them so.
	f, err := parser.ParseBytes(src, parser.ParseComments, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, yamlError(filename, err)
	}
	d := &Doc{name: filename, src: src, nl: detectNewline(src)}
	d.indexLines()

	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		switch doc.Body.(type) {
		case *ast.CommentGroupNode, *ast.DirectiveNode:
			continue
		}
		bodies = append(bodies, doc.Body)
	}
	if len(bodies) > 1 {
		return nil, &ParseError{File: filename, Line: nodeLine(bodies[1]),
			Msg: fmt.Sprintf("found %d YAML documents separated by '---'; a config file holds one mapping, merge or remove the extra documents", len(bodies))}
	}
	if len(bodies) == 1 {
		top := unwrap(bodies[0])
		switch top.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			d.body = top
		case *ast.NullNode:
			d.null = bodies[0]
		default:
			return nil, &ParseError{File: filename, Line: nodeLine(bodies[0]),
				Msg: fmt.Sprintf("the top level must be a mapping of settings (key: value), found %s", nodeKind(top))}
		}
	}

	if err := checkMergeKeys(filename, d.body); err != nil {
		return nil, err
	}
	d.dups = topLevelDups(d.body)
	if len(bodies) == 1 {
		if _, ok := manifest.YAMLExpandedValues(bodies[0], manifest.MaxYAMLValues); !ok {
			return nil, &ParseError{File: filename, Msg: fmt.Sprintf("its YAML aliases expand to more than %d values (an alias bomb?); hermes will not read it, remove or reduce the aliases", manifest.MaxYAMLValues)}
		}
	}
	var v any
	if err := yaml.UnmarshalWithOptions(src, &v, yaml.AllowDuplicateMapKey()); err != nil {
		return nil, yamlError(filename, err)
	}
	n, err := normalize(v, false)
	if err != nil {
		return nil, &ParseError{File: filename, Msg: err.Error(), Err: err}
	}
	switch t := n.(type) {
	case nil:
		d.tree = map[string]any{}
	case map[string]any:
		d.tree = t
	default:
		return nil, &ParseError{File: filename, Msg: fmt.Sprintf("the top level must be a mapping of settings, found %s", kindOf(n))}
	}

	d.indexTokens()
	return d, nil
}

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

var bom = []byte("\ufeff")

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

// checkMergeKeys rejects "<<" keys whose value cannot be merged. The decoder tolerates
// some of them only until another key is added, and upstream's PyYAML rejects them too.
func checkMergeKeys(filename string, body ast.Node) error {
	var bad *ast.MappingValueNode
	ast.Walk(visitFunc(func(n ast.Node) bool {
		mv, ok := n.(*ast.MappingValueNode)
		if !ok || bad != nil {
			return bad == nil
		}
		if isMergeKey(mv.Key) {
			switch unwrap(mv.Value).(type) {
			case *ast.MappingNode, *ast.MappingValueNode, *ast.AliasNode, *ast.SequenceNode:
			default:
				bad = mv
			}
		}
		return true
	}), body)
	if body == nil || bad == nil {
		return nil
	}
	return &ParseError{File: filename, Line: nodeLine(bad.Key),
		Msg: fmt.Sprintf("merge key '<<' must be followed by a mapping or an alias (*name), not %s", nodeKind(unwrap(bad.Value)))}
}

// isMergeKey recognises "<<"; at the very end of input the lexer reports it as a plain
// string rather than a merge key.
func isMergeKey(k ast.Node) bool {
	switch x := k.(type) {
	case *ast.MergeKeyNode:
		return true
	case *ast.StringNode:
		return x.Value == "<<" && x.Token != nil && x.Token.Type != token.SingleQuoteType && x.Token.Type != token.DoubleQuoteType
	}
	return false
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// bareCR returns the offset of the first '\r' not followed by '\n', or -1.
func bareCR(data []byte) int {
	for i, c := range data {
		if c == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return i
		}
	}
	return -1
}

func nodeLine(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func firstBadLine(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[size:]
	}
	return line
}

func detectNewline(src []byte) string {
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
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

// Bytes returns the document's current bytes.
func (d *Doc) Bytes() []byte {
	if d.bom {
		return append(bytes.Clone(bom), d.src...)
	}
	return bytes.Clone(d.src)
}

// Map returns the whole document decoded (an empty map for an empty document).
func (d *Doc) Map() map[string]any { return deepCopy(d.tree).(map[string]any) }

// Get returns the value at a dotted path such as "plugins.entries.my-plugin.settings.x"
// (see SplitPath for keys containing dots). Values are map[string]any, []any, string,
// int (uint64 beyond int's range), float64, bool or nil.
func (d *Doc) Get(path string) (any, bool) {
	segs, err := SplitPath(path)
	if err != nil {
		return nil, false
	}
	return d.GetPath(segs)
}

// GetPath is Get with the path already split into keys.
func (d *Doc) GetPath(segs []string) (any, bool) {
	var cur any = d.tree
	for _, s := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[s]; !ok {
			return nil, false
		}
	}
	return deepCopy(cur), true
}

// SplitPath splits a dotted path into keys. A key containing dots (a plugin id such as
// "acme.tools") is written in double quotes: plugins.entries."acme.tools".settings;
// inside quotes, \" and \\ escape a quote and a backslash.
func SplitPath(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("empty config key: give a key such as plugins.enabled")
	}
	var segs []string
	for i := 0; ; {
		var seg string
		if i < len(path) && path[i] == '"' {
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(path) {
				c := path[j]
				if c == '\\' && j+1 < len(path) {
					b.WriteByte(path[j+1])
					j += 2
					continue
				}
				if c == '"' {
					closed = true
					j++
					break
				}
				b.WriteByte(c)
				j++
			}
			if !closed {
				return nil, fmt.Errorf("config key %q has an unterminated quote", path)
			}
			if j < len(path) && path[j] != '.' {
				return nil, fmt.Errorf("config key %q: a quoted part must be followed by '.' or the end", path)
			}
			seg, i = b.String(), j
		} else {
			j := strings.IndexByte(path[i:], '.')
			if j < 0 {
				j = len(path) - i
			}
			seg, i = path[i:i+j], i+j
			if seg == "" {
				return nil, fmt.Errorf("config key %q has an empty part: remove the extra '.'", path)
			}
		}
		segs = append(segs, seg)
		if i >= len(path) {
			return segs, nil
		}
		i++ // skip '.'
		if i == len(path) {
			return nil, fmt.Errorf("config key %q ends with '.': remove it", path)
		}
	}
}

// JoinPath is the inverse of SplitPath: keys with dots or a leading quote are quoted.
func JoinPath(segs []string) string {
	parts := make([]string, len(segs))
	for i, s := range segs {
		if s == "" || strings.Contains(s, ".") || strings.HasPrefix(s, `"`) {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts[i] = s
	}
	return strings.Join(parts, ".")
}

// ---- positions -------------------------------------------------------------------------

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

// ---- structure -------------------------------------------------------------------------

func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		default:
			return n
		}
	}
}

func nodeKind(n ast.Node) string {
	switch x := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode, nil:
		return "null"
	case *ast.AliasNode:
		if x.Value != nil && x.Value.GetToken() != nil {
			return "an alias (*" + x.Value.GetToken().Value + ")"
		}
		return "an alias"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a " + n.Type().String()
}

// mapping is a YAML mapping located in the source.
type mapping struct {
	node    ast.Node // *ast.MappingNode or a lone *ast.MappingValueNode; nil for an empty document
	entries []*ast.MappingValueNode
	flow    bool
	open    *token.Token          // '{' of a flow mapping
	owner   *ast.MappingValueNode // entry whose value this mapping is; nil at top level
}

func asMapping(n ast.Node) (*mapping, bool) {
	switch x := unwrap(n).(type) {
	case *ast.MappingNode:
		return &mapping{node: x, entries: x.Values, flow: x.IsFlowStyle, open: x.Start}, true
	case *ast.MappingValueNode:
		return &mapping{node: x, entries: []*ast.MappingValueNode{x}, flow: x.IsFlowStyle}, true
	}
	return nil, false
}

func keyText(k ast.Node) (string, bool) {
	if isMergeKey(k) {
		return "", false
	}
	switch x := k.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.MappingKeyNode:
		return keyText(x.Value)
	case *ast.TagNode:
		return keyText(x.Value)
	case *ast.AnchorNode:
		return keyText(x.Value)
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		return x.GetToken().Value, true
	}
	return "", false
}

// find returns the entry for key; with duplicate keys the last one wins, as in the decoder.
func (m *mapping) find(key string) *ast.MappingValueNode {
	all := m.findAll(key)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

func (m *mapping) findAll(key string) []*ast.MappingValueNode {
	var found []*ast.MappingValueNode
	for _, e := range m.entries {
		if k, ok := keyText(e.Key); ok && k == key {
			found = append(found, e)
		}
	}
	return found
}

func (m *mapping) index(e *ast.MappingValueNode) int {
	for i, x := range m.entries {
		if x == e {
			return i
		}
	}
	return -1
}

func (d *Doc) top() *mapping {
	if d.body != nil {
		if m, ok := asMapping(d.body); ok {
			return m
		}
	}
	return &mapping{}
}

// target is where a path lands: segs[i] is (or would be) a key of m, entry is nil when
// it is missing. When i < len(segs)-1, entry holds a null that must become a mapping.
type target struct {
	m     *mapping
	i     int
	entry *ast.MappingValueNode
}

// notMappingError says a path runs through a value that is not a mapping.
type notMappingError struct {
	prefix string
	kind   string
}

func (e *notMappingError) Error() string {
	return fmt.Sprintf("%q is %s, not a mapping", e.prefix, e.kind)
}

func (d *Doc) resolve(segs []string) (target, error) {
	m := d.top()
	for i, seg := range segs {
		e := m.find(seg)
		if e == nil || i == len(segs)-1 {
			return target{m: m, i: i, entry: e}, nil
		}
		v := unwrap(e.Value)
		if child, ok := asMapping(v); ok {
			child.owner = e
			m = child
			continue
		}
		if _, ok := v.(*ast.NullNode); ok {
			return target{m: m, i: i, entry: e}, nil
		}
		return target{}, &notMappingError{prefix: JoinPath(segs[:i+1]), kind: nodeKind(v)}
	}
	return target{m: m}, nil
}

// style detects the file's indentation habits: how far nested mappings are indented and
// whether list dashes are indented under their key, taking the most common choice in the
// file (the first seen on a tie). Defaults: 2 and 2.
func (d *Doc) style() blockStyle {
	var steps, seqs tally
	var walk func(m *mapping)
	walk = func(m *mapping) {
		if m.flow {
			return
		}
		for _, e := range m.entries {
			kc := d.col(d.startOf(e))
			v := unwrap(e.Value)
			if child, ok := asMapping(v); ok && !child.flow && len(child.entries) > 0 {
				if c := d.col(d.startOf(child.entries[0])) - kc; c > 0 {
					steps.add(c)
				}
				walk(child)
			}
			if seq, ok := v.(*ast.SequenceNode); ok && !seq.IsFlowStyle {
				if s, _, ok := d.span(seq); ok && d.lineStart(s) != d.lineStart(d.off(e.Start)) && d.col(s) >= kc {
					seqs.add(d.col(s) - kc)
				}
			}
		}
	}
	walk(d.top())
	st := blockStyle{step: steps.best(2)}
	st.seqIndent = seqs.best(st.step)
	return st
}

// tally counts small integers, remembering the order they were first seen.
type tally struct {
	order  []int
	counts map[int]int
}

func (t *tally) add(v int) {
	if t.counts == nil {
		t.counts = map[int]int{}
	}
	if t.counts[v] == 0 {
		t.order = append(t.order, v)
	}
	t.counts[v]++
}

func (t *tally) best(def int) int {
	best := def
	for i, v := range t.order {
		if i == 0 || t.counts[v] > t.counts[best] {
			best = v
		}
	}
	return best
}

// styleFor refines the file style with the indentation used inside m itself.
func (d *Doc) styleFor(m *mapping) blockStyle {
	st := d.style()
	if m.owner != nil && !m.flow && len(m.entries) > 0 {
		if c := d.col(d.startOf(m.entries[0])) - d.col(d.startOf(m.owner)); c > 0 {
			st.step = c
		}
	}
	return st
}

// Warnings are what a user should fix in the file though it reads: a top-level key
// written twice, where the later one silently replaces the earlier (as PyYAML
// reads it), so `config get` shows what the first one does not say.
func (d *Doc) Warnings() []string {
	var out []string
	for _, dup := range d.dups {
		out = append(out, fmt.Sprintf("%s:%d: %q appears more than once (lines %d and %d); the last one is used, so merge them into one",
			d.name, dup.Last, dup.Key, dup.First, dup.Last))
	}
	return out
}

// topLevelDups finds the top-level keys of body written more than once.
func topLevelDups(body ast.Node) []manifest.DupKey {
	m, ok := body.(*ast.MappingNode)
	if !ok {
		return nil
	}
	first := map[string]int{}
	var out []manifest.DupKey
	for _, e := range m.Values {
		k, ok := keyText(e.Key)
		if !ok {
			continue
		}
		line := nodeLine(e.Key)
		if at, seen := first[k]; seen {
			out = append(out, manifest.DupKey{Key: k, First: at, Last: line})
			continue
		}
		first[k] = line
	}
	return out
}
