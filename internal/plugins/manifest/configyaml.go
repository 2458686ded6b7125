package manifest

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/hermes-go/hermes/internal/plugins/manifest/internal/yamlfast"
)

// Upstream reads config.yaml with the same PyYAML rules as plugin.yaml, so the
// config package reads it the way this one reads manifests: the fast decoder
// for the everyday subset, goccy/go-yaml for the rest, with the same alias
// bound and error positions. The fast decoder is internal to this package so
// that a second YAML parser does not spread through the code base; what
// follows is the config package's way to it (config imports this package,
// not the reverse). Nothing else should need it: decode YAML with goccy/go-yaml.

// FastYAML is a document read by DecodeFastYAML.
type FastYAML = yamlfast.Decoded

// DupKey is a top-level key given more than once; the last one wins.
type DupKey = yamlfast.Dup

// DecodeFastYAML decodes src as goccy/go-yaml would, or declines (false) when
// src is outside the subset the fast decoder reads (see internal/yamlfast).
func DecodeFastYAML(src string) (FastYAML, bool) { return yamlfast.Decode(src) }

// MaxYAMLValues bounds how many values a document may hold once its aliases
// are expanded (see YAMLExpandedValues).
const MaxYAMLValues = yamlfast.MaxExpandedValues

// YAMLExpandedValues counts the values of n with every alias expanded, as a
// decoder that copies them builds; ok is false past limit (an alias bomb).
func YAMLExpandedValues(n ast.Node, limit int) (count int, ok bool) {
	return yamlfast.ExpandedValues(n, limit)
}

// YAMLErrorPosition is where to report a goccy/go-yaml error with message msg
// at token tk: where PyYAML, and the user, would look (0, 0 when unknown).
func YAMLErrorPosition(msg string, tk *token.Token) (line, col int) {
	return yamlfast.ErrorPosition(msg, tk)
}
