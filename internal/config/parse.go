package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/hermes-go/hermes/internal/limits"
	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

func yamlError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line, _ := manifest.YAMLErrorPosition(ye.GetMessage(), ye.GetToken())
		return &ParseError{File: file, Line: line, Msg: ye.GetMessage(), Err: err}
	}
	return &ParseError{File: file, Msg: err.Error(), Err: err}
}

// Parse parses a config file's bytes. filename is used in error messages only.
// The top level must be a mapping (or empty); a file with several YAML documents is
// rejected because upstream Hermes reads exactly one.
func Parse(data []byte, filename string) (*Doc, error) {
	if filename == "" {
		filename = defaultName
	}
	body, bom := bytes.CutPrefix(data, bom)
	if err := checkLimits(body, filename); err != nil {
		return nil, err
	}
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

// checkLimits refuses, before any parser runs, a file too large or too deeply
// nested to parse in bounded memory.
func checkLimits(data []byte, filename string) error {
	err := limits.CheckYAML(data, filename, limits.Config)
	var le *limits.Error
	if errors.As(err, &le) {
		return &ParseError{File: filename, Line: le.Line, Msg: le.Detail(), Err: err}
	}
	return err
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
