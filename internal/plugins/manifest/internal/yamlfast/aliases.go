package yamlfast

import "github.com/goccy/go-yaml/ast"

// MaxExpandedValues bounds how many values a document may hold once its aliases
// are expanded. Decoding copies an anchored value at every alias, so nine
// levels of nine-fold aliases in a few hundred bytes ("an alias bomb") expand to
// hundreds of millions of values and exhaust memory; PyYAML shares them instead.
// Real configs and manifests hold a few thousand at most.
const MaxExpandedValues = 1_000_000

// ExpandedValues counts the values of n with every alias expanded, as a decoder
// that copies them builds; it stops counting past limit (ok false).
func ExpandedValues(n ast.Node, limit int) (count int, ok bool) {
	c := aliasCounter{limit: limit, anchors: map[string]int{}}
	count = c.size(n)
	return count, count <= limit
}

type aliasCounter struct {
	limit   int
	anchors map[string]int // the expanded size of each anchored value seen so far
}

func (c *aliasCounter) add(a, b int) int {
	if s := a + b; s <= c.limit {
		return s
	}
	return c.limit + 1
}

func (c *aliasCounter) size(n ast.Node) int {
	switch x := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		return c.size(x.Body)
	case *ast.MappingNode:
		return collectionSize(c, x.Values)
	case *ast.MappingValueNode:
		return c.add(c.size(x.Key), c.size(x.Value))
	case *ast.MappingKeyNode:
		return c.size(x.Value)
	case *ast.SequenceNode:
		return collectionSize(c, x.Values)
	case *ast.AnchorNode:
		s := c.size(x.Value)
		if x.Name != nil {
			c.anchors[x.Name.GetToken().Value] = s
		}
		return s
	case *ast.AliasNode:
		if x.Value != nil {
			if s, ok := c.anchors[x.Value.GetToken().Value]; ok {
				return max(s, 1)
			}
		}
		return 1
	case *ast.TagNode:
		return c.size(x.Value)
	}
	return 1
}

// collectionSize is a mapping's or a list's size: itself and its entries.
func collectionSize[N ast.Node](c *aliasCounter, entries []N) int {
	total := 1
	for _, e := range entries {
		if total = c.add(total, c.size(e)); total > c.limit {
			break
		}
	}
	return total
}
