package config

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// splice replaces src[start:end] with text.
type splice struct {
	start, end int
	text       string
}

func applySplices(src []byte, edits []splice) ([]byte, error) {
	sorted := append([]splice(nil), edits...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].start != sorted[j].start {
			return sorted[i].start < sorted[j].start
		}
		return sorted[i].end < sorted[j].end
	})
	var out bytes.Buffer
	pos := 0
	for _, e := range sorted {
		if e.start < pos || e.end < e.start || e.end > len(src) {
			return nil, errors.New("overlapping edits")
		}
		out.Write(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(src[pos:])
	return out.Bytes(), nil
}

// commit tries each candidate edit in turn and keeps the first whose result parses and
// decodes to exactly want. Nothing changes when none does.
func (d *Doc) commit(what string, want map[string]any, candidates ...[]splice) error {
	return d.commitExcept(what, want, nil, candidates...)
}

// commitExcept is commit comparing everything but the values at the paths in
// except (those that read the edited node through an alias: see aliasedPaths).
func (d *Doc) commitExcept(what string, want map[string]any, except [][]string, candidates ...[]splice) error {
	want = withoutPaths(want, except)
	var lastErr error
	for _, edits := range d.withEOFFix(candidates) {
		out, err := applySplices(d.src, edits)
		if err != nil {
			lastErr = err
			continue
		}
		nd, err := Parse(out, d.name)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				err = errors.New("the result would not parse: " + pe.Msg)
			}
			lastErr = err
			continue
		}
		if !equalValues(withoutPaths(nd.tree, except), want) {
			lastErr = errors.New("the edited file would not read back as intended")
			continue
		}
		d.replace(nd)
		return nil
	}
	if lastErr == nil {
		lastErr = errors.New("no way to place the change")
	}
	return fmt.Errorf("%s: cannot %s without disturbing the rest of the file (%v); make this change by hand", d.name, what, lastErr)
}

// withEOFFix adds, after each candidate, a variant that also applies eofScalarFix.
func (d *Doc) withEOFFix(candidates [][]splice) [][]splice {
	fix, ok := d.eofScalarFix()
	if !ok {
		return candidates
	}
	var all [][]splice
	for _, c := range candidates {
		all = append(all, c, append(append([]splice(nil), c...), fix))
	}
	return all
}

func checkSegs(segs []string) error {
	if len(segs) == 0 {
		return errors.New("empty config key: give a key such as plugins.enabled")
	}
	for _, s := range segs {
		if s == "" {
			return fmt.Errorf("config key %q has an empty part", JoinPath(segs))
		}
		if !utf8.ValidString(s) {
			return fmt.Errorf("config key %q is not valid UTF-8", s)
		}
	}
	return nil
}

// setTree applies a Set to a decoded tree, creating or replacing intermediate mappings the
// way the text edit does (a null intermediate becomes a mapping).
func setTree(tree map[string]any, segs []string, v any) {
	cur := tree
	for _, s := range segs[:len(segs)-1] {
		next, ok := cur[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[s] = next
		}
		cur = next
	}
	cur[segs[len(segs)-1]] = v
}

func parentMap(tree map[string]any, segs []string) map[string]any {
	cur := tree
	for _, s := range segs[:len(segs)-1] {
		next, ok := cur[s].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

func nest(rest []string, v any) any {
	for i := len(rest) - 1; i >= 0; i-- {
		v = map[string]any{rest[i]: v}
	}
	return v
}

// Set sets the value at a dotted path (see Get), creating missing intermediate mappings.
// value may be a scalar, []string, []any or map[string]any. An existing value is replaced
// in place; comments around it stay. A non-mapping in the middle of the path is an error.
func (d *Doc) Set(path string, value any) error {
	segs, err := SplitPath(path)
	if err != nil {
		return err
	}
	return d.SetPath(segs, value)
}

// SetPath is Set with the path already split into keys (a key may then contain dots or
// slashes, as plugin ids do).
func (d *Doc) SetPath(segs []string, value any) error {
	if err := d.ensureParsed(); err != nil {
		return err
	}
	if err := checkSegs(segs); err != nil {
		return err
	}
	path := JoinPath(segs)
	v, err := normalize(value, true)
	if err != nil {
		return fmt.Errorf("cannot set %q: %w", path, err)
	}
	t, err := d.resolve(segs)
	if err != nil {
		return fmt.Errorf("%s: cannot set %q: %w; remove or rename that key first", d.name, path, err)
	}
	want := deepCopy(d.tree).(map[string]any)
	setTree(want, segs, deepCopy(v))

	var candidates [][]splice
	if t.entry != nil {
		nv := v
		if t.i < len(segs)-1 {
			nv = nest(segs[t.i+1:], v)
		}
		edits, err := d.planReplace(t.m, t.entry, nv)
		if err != nil {
			return fmt.Errorf("%s: cannot set %q: %w", d.name, path, err)
		}
		candidates = append(candidates, edits)
	} else {
		candidates = d.planInsert(t.m, segs[t.i], nest(segs[t.i+1:], v))
	}
	return d.commitExcept(fmt.Sprintf("set %q", path), want, d.aliasedPaths(segs), candidates...)
}

// blockStart returns the offset of an existing block collection's first entry.
func (d *Doc) blockStart(n ast.Node) (int, bool) {
	switch x := n.(type) {
	case *ast.MappingNode:
		if !x.IsFlowStyle && len(x.Values) > 0 {
			return d.startOf(x.Values[0]), true
		}
	case *ast.MappingValueNode:
		if !x.IsFlowStyle {
			return d.startOf(x), true
		}
	case *ast.SequenceNode:
		if !x.IsFlowStyle {
			if s, _, ok := d.span(x); ok {
				return s, true
			}
		}
	}
	return 0, false
}

// indent returns whitespace that lines up with offset o: the line's own prefix with
// everything but tabs turned into spaces (the parser accepts tab indentation, and a new
// line must match it exactly).
func (d *Doc) indent(o int) string {
	var b strings.Builder
	for _, r := range string(d.src[d.lineStart(o):o]) {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func isFlowCollection(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.MappingNode:
		return x.IsFlowStyle
	case *ast.SequenceNode:
		return x.IsFlowStyle
	}
	return false
}

// planReplace replaces the value of entry e in mapping m with v.
func (d *Doc) planReplace(m *mapping, e *ast.MappingValueNode, v any) ([]splice, error) {
	colon := d.off(e.Start)
	colonEnd := colon + 1
	vs, ve, has := d.span(e.Value)
	if m.flow {
		if !has {
			return []splice{{colonEnd, colonEnd, " " + renderInline(v)}}, nil
		}
		return []splice{{vs, ve, renderInline(v)}}, nil
	}
	inner := unwrap(e.Value)
	block := isBlock(v) && !(has && isFlowCollection(inner))
	st := d.styleFor(m)
	keyStart := d.startOf(e)
	pad := d.indent(keyStart) + strings.Repeat(" ", st.childIndent(v))
	if c, ok := d.blockStart(inner); ok && has {
		// Keep the indentation of the block being replaced when it is valid for v.
		keyCol, cCol := d.col(keyStart), d.col(c)
		if _, isList := v.([]any); cCol > keyCol || (isList && cCol == keyCol) {
			pad = d.indent(c)
		}
	}
	blockText := func() string { return d.nl + strings.Join(st.lines(v, pad), d.nl) }

	if !has {
		if !block {
			return []splice{{colonEnd, colonEnd, " " + renderInline(v)}}, nil
		}
		le := d.lineEnd(colonEnd)
		return []splice{{le, le, blockText()}}, nil
	}
	if d.lineStart(vs) == d.lineStart(colon) {
		if !block {
			old := e.Value
			if a, ok := e.Value.(*ast.AnchorNode); ok {
				// Keep the anchor ("key: &name value"): aliases elsewhere refer to it.
				if s, _, ok := d.span(a.Value); ok && d.lineStart(s) == d.lineStart(colon) {
					vs, old = s, a.Value
				}
			}
			return []splice{{vs, ve, renderLike(old, v)}}, nil
		}
		le := d.lineEnd(ve)
		return []splice{{colonEnd, ve, ""}, {le, le, blockText()}}, nil
	}
	first, last := d.lineEnd(colon), d.lineEnd(ve)
	if !block {
		return []splice{{colonEnd, colonEnd, " " + renderInline(v)}, {first, last, ""}}, nil
	}
	return []splice{{first, last, blockText()}}, nil
}

// renderLike renders v inline, keeping the quoting style of the scalar it replaces when v
// is a string that style can hold.
func renderLike(old ast.Node, v any) string {
	s, ok := v.(string)
	sn, isStr := old.(*ast.StringNode)
	if !ok || !isStr || sn.Token == nil {
		return renderInline(v)
	}
	switch sn.Token.Type {
	case token.SingleQuoteType:
		if printable(s) {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
	case token.DoubleQuoteType:
		return strconv.Quote(s)
	}
	return renderInline(v)
}

// printable reports whether s can sit inside single quotes: no line breaks, tabs or other
// characters that only double quotes can escape.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// planInsert adds key: v to mapping m; it returns candidate edits, best first.
func (d *Doc) planInsert(m *mapping, key string, v any) [][]splice {
	if m.node == nil {
		st := d.style()
		lines := strings.Join(st.entryLines(key, v, ""), d.nl)
		if d.null != nil {
			if s, e, ok := d.span(d.null); ok {
				ls := d.lineStart(s)
				if strings.TrimSpace(string(d.src[ls:s])) == "" {
					s = ls // drop indentation before the null too, so the key starts its line
				}
				return [][]splice{{{s, e, lines}}, {{s, e, ""}, d.appendAtEnd(lines + d.nl)}}
			}
		}
		return [][]splice{{d.appendAtEnd(lines + d.nl)}}
	}
	if m.flow {
		kv := renderString(key) + ": " + renderInline(v)
		if len(m.entries) > 0 {
			_, e, _ := d.span(m.entries[len(m.entries)-1])
			return [][]splice{{{e, e, ", " + kv}}}
		}
		o := d.off(m.open) + 1
		return [][]splice{{{o, o, kv}}}
	}
	st := d.styleFor(m)
	first := d.startOf(m.entries[0])
	pads := []string{d.indent(first)}
	if strings.Contains(pads[0], "\t") {
		// Tab indentation is not YAML, but the parser tolerates it in places, counting a
		// tab as no column at all; try indentation matching that view too.
		if tk := m.entries[0].Key.GetToken(); tk != nil && tk.Position != nil && tk.Position.Column > 0 {
			pads = append(pads, strings.Repeat(" ", tk.Position.Column-1))
		}
	}
	_, end, _ := d.span(m.entries[len(m.entries)-1])
	eol := d.lineEnd(end)
	var candidates [][]splice
	for _, pad := range pads {
		lines := strings.Join(st.entryLines(key, v, pad), d.nl)
		candidates = append(candidates, []splice{{eol, eol, d.nl + lines}})
		if m.owner == nil {
			// Fallbacks for layouts where the parser reads text added after the last entry
			// differently (e.g. a dangling tag at the end): a new last line, else a new
			// first entry.
			candidates = append(candidates, []splice{d.appendAtEnd(lines + d.nl)})
			if ls := d.lineStart(first); strings.Trim(string(d.src[ls:first]), " \t") == "" {
				candidates = append(candidates, []splice{{ls, ls, lines + d.nl}})
			}
		}
	}
	return candidates
}

func (d *Doc) appendAtEnd(text string) splice {
	n := len(d.src)
	if n > 0 && d.src[n-1] != '\n' {
		text = d.nl + text
	}
	return splice{n, n, text}
}

// Delete removes the key at path. It reports whether something was removed; a missing key
// (or a path through a non-mapping) is not an error. Comments above the key are kept.
func (d *Doc) Delete(path string) (bool, error) {
	segs, err := SplitPath(path)
	if err != nil {
		return false, err
	}
	return d.DeletePath(segs)
}

// DeletePath is Delete with the path already split into keys.
func (d *Doc) DeletePath(segs []string) (bool, error) {
	if err := d.ensureParsed(); err != nil {
		return false, err
	}
	if err := checkSegs(segs); err != nil {
		return false, err
	}
	t, err := d.resolve(segs)
	if err != nil || t.entry == nil || t.i != len(segs)-1 {
		return false, nil
	}
	path := JoinPath(segs)
	want := deepCopy(d.tree).(map[string]any)
	if p := parentMap(want, segs); p != nil {
		delete(p, segs[len(segs)-1])
	}
	m, e := t.m, t.entry
	var edits []splice
	if m.flow {
		idx := m.index(e)
		s, end, _ := d.span(e)
		switch {
		case len(m.entries) == 1:
			edits = []splice{{s, end, ""}}
		case idx > 0:
			_, prevEnd, _ := d.span(m.entries[idx-1])
			edits = []splice{{prevEnd, end, ""}}
		default:
			edits = []splice{{s, d.startOf(m.entries[idx+1]), ""}}
		}
	} else {
		// Every duplicate of the key goes, or an earlier one would take effect.
		all := m.findAll(segs[len(segs)-1])
		for _, e := range all {
			s, end, _ := d.span(e)
			ls := d.lineStart(s)
			if strings.TrimLeft(string(d.src[ls:s]), " ") != "" {
				return false, fmt.Errorf("%s: cannot delete %q: it shares a line with other content; remove it by hand", d.name, path)
			}
			edits = append(edits, splice{ls, d.nextLine(end), ""})
		}
		if len(all) == len(m.entries) && m.owner != nil {
			// Keep the parent a mapping ("key: {}") rather than turning it into null.
			o := d.afterValuePrefix(m.owner)
			edits = append(edits, splice{o, o, " {}"})
		}
	}
	if err := d.commit(fmt.Sprintf("delete %q", path), want, edits); err != nil {
		return false, err
	}
	return true, nil
}

// afterValuePrefix is where a value written on the key's line goes: after the colon, or
// after an anchor or tag that precedes a block value.
func (d *Doc) afterValuePrefix(e *ast.MappingValueNode) int {
	o := d.off(e.Start) + 1
	switch x := e.Value.(type) {
	case *ast.AnchorNode:
		if _, end, ok := d.span(x.Name); ok {
			o = end
		}
	case *ast.TagNode:
		o = d.endAfter(d.off(x.Start))
	}
	return o
}

// listAt locates the list at path; ok is false when the key is missing or null. A value
// that is neither a list nor null is an error.
func (d *Doc) listAt(segs []string, verb string) (*ast.SequenceNode, bool, error) {
	path := JoinPath(segs)
	t, err := d.resolve(segs)
	if err != nil {
		return nil, false, fmt.Errorf("%s: cannot %s %q: %w; fix that key first", d.name, verb, path, err)
	}
	if t.entry == nil || t.i != len(segs)-1 {
		return nil, false, nil
	}
	switch x := unwrap(t.entry.Value).(type) {
	case *ast.SequenceNode:
		return x, true, nil
	case *ast.NullNode:
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("%s: cannot %s %q: it is %s, not a list; fix or unset it first", d.name, verb, path, nodeKind(x))
	}
}

// itemSpan is the text of one list item, including its dash in block style.
func (d *Doc) itemSpan(seq *ast.SequenceNode, i int) (int, int) {
	start, last := -1, -1
	note := func(tk *token.Token) {
		o := d.off(tk)
		if start < 0 || o < start {
			start = o
		}
		if o > last {
			last = o
		}
	}
	if !seq.IsFlowStyle && i < len(seq.Entries) && seq.Entries[i].Start != nil {
		note(seq.Entries[i].Start)
	}
	d.eachToken(seq.Values[i], note)
	if start < 0 {
		return 0, 0
	}
	return start, d.endAfter(last)
}

// ListAppend adds item to the list at path unless an equal string is already there,
// creating the list when missing. It keeps the list's style (block or flow) and
// indentation. It reports whether the list changed.
func (d *Doc) ListAppend(path string, item string) (bool, error) {
	segs, err := SplitPath(path)
	if err != nil {
		return false, err
	}
	return d.ListAppendPath(segs, item)
}

// ListAppendPath is ListAppend with the path already split into keys.
func (d *Doc) ListAppendPath(segs []string, item string) (bool, error) {
	if err := d.ensureParsed(); err != nil {
		return false, err
	}
	if err := checkSegs(segs); err != nil {
		return false, err
	}
	seq, ok, err := d.listAt(segs, "add to")
	if err != nil {
		return false, err
	}
	if !ok {
		return true, d.SetPath(segs, []any{item})
	}
	cur, _ := d.GetPath(segs)
	list, _ := cur.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok && s == item {
			return false, nil
		}
	}
	nv, err := normalize(item, true)
	if err != nil {
		return false, err
	}
	path := JoinPath(segs)
	want := deepCopy(d.tree).(map[string]any)
	setTree(want, segs, append(list, nv))

	var edits []splice
	n := len(seq.Values)
	switch {
	case n == 0 && !seq.IsFlowStyle:
		return true, d.SetPath(segs, []any{nv})
	case seq.IsFlowStyle && n > 0:
		_, e := d.itemSpan(seq, n-1)
		edits = []splice{{e, e, ", " + renderInline(nv)}}
	case seq.IsFlowStyle:
		o := d.off(seq.Start) + 1
		edits = []splice{{o, o, renderInline(nv)}}
	default:
		s, e := d.itemSpan(seq, n-1)
		eol := d.lineEnd(e)
		edits = []splice{{eol, eol, d.nl + d.indent(s) + "- " + renderInline(nv)}}
	}
	if err := d.commit(fmt.Sprintf("add %q to %q", item, path), want, edits); err != nil {
		return false, err
	}
	return true, nil
}

// ListRemove removes every string equal to item from the list at path. Removing the
// last item leaves an explicit empty list ([]), which is not the same as a missing key
// (for plugins.enabled: "none enabled" versus "never configured"). It reports whether
// the list changed; a missing list is not an error.
func (d *Doc) ListRemove(path string, item string) (bool, error) {
	segs, err := SplitPath(path)
	if err != nil {
		return false, err
	}
	return d.ListRemovePath(segs, item)
}

// ListRemovePath is ListRemove with the path already split into keys.
func (d *Doc) ListRemovePath(segs []string, item string) (bool, error) {
	if err := d.ensureParsed(); err != nil {
		return false, err
	}
	if err := checkSegs(segs); err != nil {
		return false, err
	}
	seq, ok, err := d.listAt(segs, "remove from")
	if err != nil || !ok {
		return false, err
	}
	cur, _ := d.GetPath(segs)
	list, _ := cur.([]any)
	if len(list) != len(seq.Values) {
		return false, fmt.Errorf("%s: cannot edit %q: the list's layout is not understood; edit it by hand", d.name, JoinPath(segs))
	}
	var kept []any
	remove := make([]bool, len(list))
	for i, x := range list {
		if s, ok := x.(string); ok && s == item {
			remove[i] = true
			continue
		}
		kept = append(kept, x)
	}
	if len(kept) == len(list) {
		return false, nil
	}
	if len(kept) == 0 {
		return true, d.SetPath(segs, []any{})
	}
	path := JoinPath(segs)
	want := deepCopy(d.tree).(map[string]any)
	setTree(want, segs, kept)

	var edits []splice
	if seq.IsFlowStyle {
		// Remove each run of items together with the separator before it (or after it,
		// for a run at the front), so the remaining text stays as written.
		for a := 0; a < len(list); a++ {
			if !remove[a] {
				continue
			}
			b := a
			for b+1 < len(list) && remove[b+1] {
				b++
			}
			if a > 0 {
				_, prevEnd := d.itemSpan(seq, a-1)
				_, end := d.itemSpan(seq, b)
				edits = append(edits, splice{prevEnd, end, ""})
			} else {
				s, _ := d.itemSpan(seq, a)
				next, _ := d.itemSpan(seq, b+1)
				edits = append(edits, splice{s, next, ""})
			}
			a = b
		}
	} else {
		for i := range list {
			if !remove[i] {
				continue
			}
			s, e := d.itemSpan(seq, i)
			ls := d.lineStart(s)
			if strings.TrimLeft(string(d.src[ls:s]), " ") != "" {
				return false, fmt.Errorf("%s: cannot remove %q from %q: the item shares a line with other content; edit it by hand", d.name, item, path)
			}
			edits = append(edits, splice{ls, d.nextLine(e), ""})
		}
	}
	if err := d.commit(fmt.Sprintf("remove %q from %q", item, path), want, edits); err != nil {
		return false, err
	}
	return true, nil
}
