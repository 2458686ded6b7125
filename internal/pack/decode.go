package pack

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Limits on the generic tree built from a pack. A real pack has a few dozen nodes;
// these only stop hostile documents: an alias bomb ("billion laughs") expands a few
// hundred bytes into billions of nodes, and deep nesting exhausts the stack.
const (
	maxDepth      = 64
	maxNodes      = 200_000
	maxAliasNodes = 10_000
	maxTokens     = 100_000
)

// ErrAliasBomb, ErrCycle and ErrTooDeep classify hostile YAML.
var (
	ErrAliasBomb = errors.New("aliases expand to too many nodes (an alias bomb?)")
	ErrCycle     = errors.New("an alias refers to the node that contains it (a cyclic document)")
	ErrTooDeep   = errors.New("nesting is too deep")
)

// standardTags are the YAML core tags (plus omap/pairs/set, which PyYAML knows); any
// other tag is refused rather than silently read as a plain value.
var standardTags = map[string]bool{
	"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!map": true, "!!seq": true, "!!omap": true, "!!pairs": true, "!!set": true,
	"!!timestamp": true, "!!binary": true,
}

// decodeYAML parses one YAML document into map[string]any / []any / scalars.
// Aliases and merge keys are expanded by this walker itself (not by a decoder), so
// every key a consumer could see is in the returned tree and is validated there;
// expansion is bounded (ErrAliasBomb, ErrTooDeep) and a cyclic alias is an error
// (ErrCycle).
func decodeYAML(data []byte) (any, error) {
	if err := preflight(data); err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, err
	}
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if len(docs) > 1 {
		return nil, errors.New("the file holds more than one YAML document (---); a pack is one document")
	}
	d := &decoder{anchors: map[string]ast.Node{}}
	return d.value(docs[0].Body, 0, false)
}

// preflight bounds the parser's work before it runs: goccy's parser is quadratic
// in nesting depth (1 MiB of "[" would take tens of minutes), while its lexer is
// linear. From the tokens it over-estimates the depth (open flow collections +
// block indentation levels + entries opened on one line) and counts tokens.
func preflight(data []byte) error {
	toks := lexer.Tokenize(string(data))
	if len(toks) > maxTokens {
		return fmt.Errorf("the document has more than %d tokens; a pack is small", maxTokens)
	}
	flow, line, perLine := 0, -1, 0
	var cols []int
	for _, tk := range toks {
		if tk == nil || tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		}
		if tk.Position.Line != line {
			line, perLine = tk.Position.Line, 0
			if flow == 0 {
				c := tk.Position.Column
				for len(cols) > 0 && cols[len(cols)-1] >= c {
					cols = cols[:len(cols)-1]
				}
				cols = append(cols, c)
			}
		}
		if tk.Type == token.SequenceEntryType || tk.Type == token.MappingValueType || tk.Type == token.MappingKeyType {
			perLine++
		}
		if flow+len(cols)+perLine > 2*maxDepth {
			return fmt.Errorf("%w (line %d)", ErrTooDeep, tk.Position.Line)
		}
	}
	return nil
}

type decoder struct {
	anchors    map[string]ast.Node
	active     []string // anchors whose node is being built right now
	nodes      int
	aliasNodes int
}

func (d *decoder) isActive(name string) bool {
	for _, a := range d.active {
		if a == name {
			return true
		}
	}
	return false
}

func (d *decoder) value(n ast.Node, depth int, viaAlias bool) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w (more than %d levels)", ErrTooDeep, maxDepth)
	}
	d.nodes++
	if d.nodes > maxNodes {
		return nil, fmt.Errorf("the document has more than %d nodes; a pack is small", maxNodes)
	}
	if viaAlias {
		d.aliasNodes++
		if d.aliasNodes > maxAliasNodes {
			return nil, fmt.Errorf("%w: more than %d nodes reached through aliases", ErrAliasBomb, maxAliasNodes)
		}
	}
	switch x := n.(type) {
	case nil:
		return nil, nil
	case *ast.DocumentNode:
		return d.value(x.Body, depth, viaAlias)
	case *ast.AnchorNode:
		name := x.Name.String()
		if d.isActive(name) {
			return nil, fmt.Errorf("%w: anchor &%s", ErrCycle, name)
		}
		if !viaAlias {
			d.anchors[name] = x.Value
		}
		d.active = append(d.active, name)
		v, err := d.value(x.Value, depth, viaAlias)
		d.active = d.active[:len(d.active)-1]
		return v, err
	case *ast.AliasNode:
		name := x.Value.String()
		if d.isActive(name) {
			return nil, fmt.Errorf("%w: alias *%s", ErrCycle, name)
		}
		target, ok := d.anchors[name]
		if !ok {
			return nil, fmt.Errorf("alias *%s refers to no anchor defined before it", name)
		}
		d.active = append(d.active, name)
		v, err := d.value(target, depth+1, true)
		d.active = d.active[:len(d.active)-1]
		return v, err
	case *ast.TagNode:
		tag := x.Start.Value
		if !standardTags[tag] {
			return nil, fmt.Errorf("line %d: tag %s is not supported in a pack", x.GetToken().Position.Line, tag)
		}
		if tag == "!!str" {
			if s, ok := scalarText(x.Value); ok {
				return s, nil
			}
		}
		return d.value(x.Value, depth, viaAlias)
	case *ast.MappingNode:
		return d.mapping(x.Values, depth, viaAlias)
	case *ast.MappingValueNode:
		return d.mapping([]*ast.MappingValueNode{x}, depth, viaAlias)
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for _, v := range x.Values {
			e, err := d.value(v, depth+1, viaAlias)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case *ast.StringNode:
		return x.Value, nil
	case *ast.LiteralNode:
		return x.Value.Value, nil
	case *ast.IntegerNode:
		if t := x.GetToken(); t != nil && shaRE.MatchString(t.Value) {
			// An unquoted commit SHA made only of digits (and maybe one e) reads as a
			// number in YAML; keep what was written.
			return t.Value, nil
		}
		switch v := x.Value.(type) {
		case int64:
			if v >= math.MinInt && v <= math.MaxInt {
				return int(v), nil
			}
		case uint64:
			if v <= math.MaxInt {
				return int(v), nil
			}
		}
		return x.Value, nil
	case *ast.FloatNode:
		if t := x.GetToken(); t != nil && shaRE.MatchString(t.Value) {
			return t.Value, nil
		}
		return x.Value, nil
	case *ast.InfinityNode:
		return x.Value, nil
	case *ast.NanNode:
		return math.NaN(), nil
	case *ast.BoolNode:
		return x.Value, nil
	case *ast.NullNode:
		return nil, nil
	case *ast.CommentNode, *ast.CommentGroupNode:
		return nil, nil
	default:
		return nil, fmt.Errorf("line %d: unsupported YAML node (%s)", n.GetToken().Position.Line, n.Type())
	}
}

// scalarText is the source text of a scalar (for !!str on a number or bool).
func scalarText(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		return x.GetToken().Value, true
	}
	return "", false
}

// mapping builds a map. Keys must be strings and unique; "<<" merge keys take a
// mapping or a list of mappings, and their keys fill in only keys the mapping does
// not set itself (earlier merged mappings win over later ones, as in YAML 1.1).
func (d *decoder) mapping(entries []*ast.MappingValueNode, depth int, viaAlias bool) (map[string]any, error) {
	out := make(map[string]any, len(entries))
	var merged []map[string]any
	for _, e := range entries {
		if isMergeKey(e.Key) {
			v, err := d.value(e.Value, depth+1, viaAlias)
			if err != nil {
				return nil, err
			}
			switch mv := v.(type) {
			case map[string]any:
				merged = append(merged, mv)
			case []any:
				for _, item := range mv {
					m, ok := item.(map[string]any)
					if !ok {
						return nil, fmt.Errorf("line %d: a merge key (<<) takes a mapping or a list of mappings", e.Key.GetToken().Position.Line)
					}
					merged = append(merged, m)
				}
			default:
				return nil, fmt.Errorf("line %d: a merge key (<<) takes a mapping or a list of mappings", e.Key.GetToken().Position.Line)
			}
			continue
		}
		k, err := d.key(e.Key, depth)
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d: duplicate key %q", e.Key.GetToken().Position.Line, k)
		}
		v, err := d.value(e.Value, depth+1, viaAlias)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	for _, m := range merged {
		for k, v := range m {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out, nil
}

func isMergeKey(k ast.Node) bool {
	for {
		switch x := k.(type) {
		case *ast.MergeKeyNode:
			return true
		case *ast.MappingKeyNode:
			k = x.Value
		case *ast.TagNode:
			k = x.Value
		default:
			return false
		}
	}
}

// key reads a mapping key: a string scalar, possibly tagged, anchored or an alias.
func (d *decoder) key(k ast.Node, depth int) (string, error) {
	v, err := d.value(unwrapKey(k), depth+1, false)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		line := 0
		if t := k.GetToken(); t != nil {
			line = t.Position.Line
		}
		return "", fmt.Errorf("line %d: mapping keys must be strings, got %s", line, strings.TrimSpace(fmt.Sprint(v)))
	}
	return s, nil
}

func unwrapKey(k ast.Node) ast.Node {
	if x, ok := k.(*ast.MappingKeyNode); ok {
		return x.Value
	}
	return k
}
