package discovery

import (
	"fmt"
	"sort"
	"strings"
)

// NotFoundError is ResolveName's answer for a name no plugin has.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("Plugin '%s' is not installed or bundled.", e.Name)
}

// AmbiguousError is ResolveName's answer for a name several plugins match.
type AmbiguousError struct {
	Name string
	Keys []string // sorted
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("Plugin name '%s' matches several plugins: %s; use the full key", e.Name, strings.Join(e.Keys, ", "))
}

// ResolveName finds the plugin a CLI argument means: an exact key, else an
// exact manifest name, else the unique plugin whose key ends in "/<name>"
// (langfuse -> observability/langfuse).
func ResolveName(cands []*Candidate, name string) (*Candidate, error) {
	if name == "" {
		return nil, &NotFoundError{Name: name}
	}
	for _, c := range cands {
		if c.Key == name {
			return c, nil
		}
	}
	match := func(ok func(*Candidate) bool) (*Candidate, error) {
		var hits []*Candidate
		for _, c := range cands {
			if ok(c) {
				hits = append(hits, c)
			}
		}
		switch len(hits) {
		case 0:
			return nil, nil
		case 1:
			return hits[0], nil
		}
		keys := make([]string, len(hits))
		for i, c := range hits {
			keys[i] = c.Key
		}
		sort.Strings(keys)
		return nil, &AmbiguousError{Name: name, Keys: keys}
	}
	if c, err := match(func(c *Candidate) bool { return c.Manifest != nil && c.Manifest.Name == name }); c != nil || err != nil {
		return c, err
	}
	leaf := func(c *Candidate) bool {
		i := strings.LastIndexByte(c.Key, '/')
		return i >= 0 && c.Key[i+1:] == name
	}
	if c, err := match(leaf); c != nil || err != nil {
		return c, err
	}
	return nil, &NotFoundError{Name: name}
}
