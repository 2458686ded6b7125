package config

import (
	"slices"

	"github.com/goccy/go-yaml/ast"
)

// An edit inside an anchored node ("base: &b") also changes what every alias of
// that anchor ("*b", "<<: *b") reads. The check that an edit reads back as
// intended compares the whole decoded file, so those paths are left out of the
// comparison: they change with the edit by the document's own design.

type aliasUse struct {
	path   []string // where the alias (or the mapping holding the merge key) is
	anchor string
}

// aliasedPaths returns the paths that read the value at segs through an alias or
// a merge key, transitively (an alias inside an aliased node counts too).
func (d *Doc) aliasedPaths(segs []string) [][]string {
	if d.body == nil {
		return nil
	}
	anchors := map[string][]string{}
	var uses []aliasUse
	collectAliases(d.body, nil, anchors, &uses)
	if len(uses) == 0 {
		return nil
	}
	var out [][]string
	edited := [][]string{segs}
	for i := 0; i < len(edited) && len(out) < 256; i++ {
		for _, u := range uses {
			at, ok := anchors[u.anchor]
			if !ok || !hasPrefix(edited[i], at) && !hasPrefix(at, edited[i]) {
				continue
			}
			if !slices.ContainsFunc(out, func(p []string) bool { return slices.Equal(p, u.path) }) {
				out = append(out, u.path)
				edited = append(edited, u.path)
			}
		}
	}
	return out
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// collectAliases records the path of every anchor and every alias use under n.
// Nodes inside lists are skipped: config paths do not index into lists.
func collectAliases(n ast.Node, path []string, anchors map[string][]string, uses *[]aliasUse) {
	switch x := n.(type) {
	case *ast.DocumentNode:
		collectAliases(x.Body, path, anchors, uses)
	case *ast.MappingNode:
		for _, v := range x.Values {
			collectAliases(v, path, anchors, uses)
		}
	case *ast.MappingValueNode:
		if isMergeKey(x.Key) {
			for _, name := range aliasNames(x.Value) {
				*uses = append(*uses, aliasUse{path: slices.Clone(path), anchor: name})
			}
			return
		}
		key, ok := keyText(x.Key)
		if !ok {
			return
		}
		collectAliases(x.Value, append(slices.Clone(path), key), anchors, uses)
	case *ast.AnchorNode:
		if x.Name != nil {
			anchors[x.Name.GetToken().Value] = slices.Clone(path)
		}
		collectAliases(x.Value, path, anchors, uses)
	case *ast.TagNode:
		collectAliases(x.Value, path, anchors, uses)
	case *ast.AliasNode:
		if x.Value != nil && len(path) > 0 {
			*uses = append(*uses, aliasUse{path: slices.Clone(path), anchor: x.Value.GetToken().Value})
		}
	}
}

// aliasNames returns the anchors a merge key's value names: *a, or [*a, *b].
func aliasNames(n ast.Node) []string {
	switch x := n.(type) {
	case *ast.AliasNode:
		if x.Value != nil {
			return []string{x.Value.GetToken().Value}
		}
	case *ast.SequenceNode:
		var out []string
		for _, v := range x.Values {
			out = append(out, aliasNames(v)...)
		}
		return out
	}
	return nil
}

// withoutPaths returns tree without the values at paths (tree itself when there
// are none).
func withoutPaths(tree map[string]any, paths [][]string) map[string]any {
	if len(paths) == 0 {
		return tree
	}
	out := deepCopy(tree).(map[string]any)
	for _, p := range paths {
		if len(p) == 0 {
			return map[string]any{}
		}
		if m := parentMap(out, p); m != nil {
			delete(m, p[len(p)-1])
		}
	}
	return out
}
