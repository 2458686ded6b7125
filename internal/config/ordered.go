package config

import (
	"fmt"
	"sort"

	"github.com/goccy/go-yaml"
)

// GetOrdered is Get with mappings as yaml.MapSlice in the order the file writes
// their keys (Get's maps have none), for printing a section as the user wrote it.
// Values are Get's (YAML 1.1 booleans, merged keys, ...); keys only a merge
// brings in come after the written ones, sorted. When the order cannot be read,
// mappings come sorted.
func (d *Doc) GetOrdered(path string) (any, bool) {
	segs, err := SplitPath(path)
	if err != nil {
		return nil, false
	}
	v, ok := d.GetPath(segs)
	if !ok {
		return nil, false
	}
	switch v.(type) {
	case map[string]any, []any:
	default:
		return v, true // a scalar has no order: no second decode of the file
	}
	var written any
	if err := yaml.UnmarshalWithOptions(d.src, &written, yaml.UseOrderedMap()); err == nil {
		for _, s := range segs {
			written = orderedChild(written, s)
		}
	} else {
		written = nil
	}
	return inWrittenOrder(v, written), true
}

func orderedChild(written any, key string) any {
	if ms, ok := written.(yaml.MapSlice); ok {
		for _, it := range ms {
			if fmt.Sprint(it.Key) == key {
				return it.Value
			}
		}
	}
	return nil
}

// inWrittenOrder rebuilds v with its mappings' keys in the order of written (the
// same value as decoded with its key order; nil when unknown).
func inWrittenOrder(v, written any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(yaml.MapSlice, 0, len(x))
		seen := make(map[string]bool, len(x))
		if ms, ok := written.(yaml.MapSlice); ok {
			for _, it := range ms {
				k := fmt.Sprint(it.Key)
				if val, ok := x[k]; ok && !seen[k] {
					seen[k] = true
					out = append(out, yaml.MapItem{Key: k, Value: inWrittenOrder(val, it.Value)})
				}
			}
		}
		var rest []string
		for k := range x {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			out = append(out, yaml.MapItem{Key: k, Value: inWrittenOrder(x[k], nil)})
		}
		return out
	case []any:
		wl, _ := written.([]any)
		out := make([]any, len(x))
		for i, e := range x {
			var w any
			if i < len(wl) {
				w = wl[i]
			}
			out[i] = inWrittenOrder(e, w)
		}
		return out
	}
	return v
}
