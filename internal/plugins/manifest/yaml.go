package manifest

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/hermes-go/hermes/internal/plugins/manifest/internal/yamlfast"
)

// SyntaxError is a manifest that is not valid YAML, or not a mapping. Line is
// 1-based, 0 when the position is unknown.
type SyntaxError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// decodeYAML turns a manifest into its top-level mapping, through the fast
// decoder when the text allows it and the general one otherwise.
// decoded is what both decoders produce for one manifest.
type decoded = yamlfast.Decoded

func decodeYAML(data []byte, file string) (decoded, error) {
	if d, ok := yamlfast.Decode(string(data)); ok {
		return d, nil
	}
	return slowDecode(data, file)
}

// slowDecode is the general decoder (goccy/go-yaml). Duplicate keys are
// allowed, the last one winning, as PyYAML does for upstream manifests.
func slowDecode(data []byte, file string) (d decoded, err error) {
	defer func() {
		// A parser bug on hostile input must cost one plugin, not the host.
		if r := recover(); r != nil {
			d, err = decoded{}, &SyntaxError{File: file, Msg: fmt.Sprintf("invalid YAML: the parser failed (%v); simplify the file", r)}
		}
	}()
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return decoded{}, yamlError(file, err)
	}
	var body ast.Node
	docs := 0
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		docs++
		if body == nil {
			body = doc.Body
		}
	}
	if docs > 1 {
		return decoded{}, &SyntaxError{File: file, Msg: "holds more than one YAML document; a manifest must be a single mapping (remove the extra '---' sections)"}
	}
	d.Doc = map[string]any{}
	if body == nil {
		return d, nil
	}
	if _, ok := yamlfast.ExpandedValues(body, yamlfast.MaxExpandedValues); !ok {
		return decoded{}, &SyntaxError{File: file, Msg: fmt.Sprintf("its YAML aliases expand to more than %d values (an alias bomb?); a manifest needs a few dozen, remove the aliases", yamlfast.MaxExpandedValues)}
	}
	var v any
	if err := yaml.NodeToValue(body, &v, yaml.AllowDuplicateMapKey()); err != nil {
		return decoded{}, yamlError(file, err)
	}
	switch m := v.(type) {
	case nil:
		return d, nil
	case map[string]any:
		d.Doc = m
	default:
		line := 0
		if tk := body.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return decoded{}, &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf("the top level must be a mapping of manifest fields (name: ..., version: ...), not %s", typeName(v))}
	}
	d.Lit, d.Dups = topLevelScalars(body)
	return d, nil
}

// topLevelScalars collects the source text of top-level non-string scalars
// and the keys that appear more than once.
func topLevelScalars(body ast.Node) (map[string]string, []yamlfast.Dup) {
	var pairs []*ast.MappingValueNode
	switch n := body.(type) {
	case *ast.MappingNode:
		pairs = n.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{n}
	default:
		return nil, nil
	}
	var lit map[string]string
	var dups []yamlfast.Dup
	seen := make(map[string]int, len(pairs))
	for _, kv := range pairs {
		ktk := kv.Key.GetToken()
		if ktk == nil {
			continue
		}
		key := ktk.Value
		line := 0
		if ktk.Position != nil {
			line = ktk.Position.Line
		}
		if first, ok := seen[key]; ok {
			dups = append(dups, yamlfast.Dup{Key: key, First: first, Last: line})
		} else {
			seen[key] = line
		}
		val := kv.Value
		if a, ok := val.(*ast.AnchorNode); ok {
			val = a.Value
		}
		switch val.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
			if lit == nil {
				lit = map[string]string{}
			}
			lit[key] = val.GetToken().Value
		default:
			delete(lit, key)
		}
	}
	return lit, dups
}

func yamlError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		se := &SyntaxError{File: file, Msg: "invalid YAML: " + ye.GetMessage()}
		se.Line, se.Col = yamlfast.ErrorPosition(ye.GetMessage(), ye.GetToken())
		return se
	}
	return &SyntaxError{File: file, Msg: "invalid YAML: " + err.Error()}
}
