package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Mappings, keys and paths in the syntax tree, and the indentation style an
// insertion follows.

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
