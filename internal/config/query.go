package config

import (
	"errors"
	"fmt"
	"strings"
)

// Get returns the value at a dotted path such as "plugins.entries.my-plugin.settings.x"
// (see SplitPath for keys containing dots). Values are map[string]any, []any, string,
// int (uint64 beyond int's range), float64, bool or nil.
func (d *Doc) Get(path string) (any, bool) {
	segs, err := SplitPath(path)
	if err != nil {
		return nil, false
	}
	return d.GetPath(segs)
}

// GetPath is Get with the path already split into keys.
func (d *Doc) GetPath(segs []string) (any, bool) {
	var cur any = d.tree
	for _, s := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[s]; !ok {
			return nil, false
		}
	}
	return deepCopy(cur), true
}

// SplitPath splits a dotted path into keys. A key containing dots (a plugin id such as
// "acme.tools") is written in double quotes: plugins.entries."acme.tools".settings;
// inside quotes, \" and \\ escape a quote and a backslash.
func SplitPath(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("empty config key: give a key such as plugins.enabled")
	}
	var segs []string
	for i := 0; ; {
		var seg string
		if i < len(path) && path[i] == '"' {
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(path) {
				c := path[j]
				if c == '\\' && j+1 < len(path) {
					b.WriteByte(path[j+1])
					j += 2
					continue
				}
				if c == '"' {
					closed = true
					j++
					break
				}
				b.WriteByte(c)
				j++
			}
			if !closed {
				return nil, fmt.Errorf("config key %q has an unterminated quote", path)
			}
			if j < len(path) && path[j] != '.' {
				return nil, fmt.Errorf("config key %q: a quoted part must be followed by '.' or the end", path)
			}
			seg, i = b.String(), j
		} else {
			j := strings.IndexByte(path[i:], '.')
			if j < 0 {
				j = len(path) - i
			}
			seg, i = path[i:i+j], i+j
			if seg == "" {
				return nil, fmt.Errorf("config key %q has an empty part: remove the extra '.'", path)
			}
		}
		segs = append(segs, seg)
		if i >= len(path) {
			return segs, nil
		}
		i++ // skip '.'
		if i == len(path) {
			return nil, fmt.Errorf("config key %q ends with '.': remove it", path)
		}
	}
}

// JoinPath is the inverse of SplitPath: keys with dots or a leading quote are quoted.
func JoinPath(segs []string) string {
	parts := make([]string, len(segs))
	for i, s := range segs {
		if s == "" || strings.Contains(s, ".") || strings.HasPrefix(s, `"`) {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts[i] = s
	}
	return strings.Join(parts, ".")
}
