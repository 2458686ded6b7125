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
	"fmt"

	"github.com/goccy/go-yaml/ast"

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

// NewDoc returns an empty document (no bytes).
func NewDoc() *Doc {
	return &Doc{name: defaultName, tree: map[string]any{}, nl: "\n", lines: []int{0}}
}

// bom is the UTF-8 byte order mark, kept out of Doc.src (see Doc.bom).
var bom = []byte("\ufeff")

// Bytes returns the document's current bytes.
func (d *Doc) Bytes() []byte {
	if d.bom {
		return append(bytes.Clone(bom), d.src...)
	}
	return bytes.Clone(d.src)
}

// Map returns the whole document decoded (an empty map for an empty document).
func (d *Doc) Map() map[string]any { return deepCopy(d.tree).(map[string]any) }

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
