package discovery

import (
	"fmt"
	"sort"
	"strings"
)

// LoadOrder sorts the plugins to load so that each comes after the plugins
// it requires (requires_plugins, matched by key or manifest name). Plugins
// that become ready together load alphabetically by key. A dependency that
// is not in toLoad only warns (the plugin loads anyway and can probe with
// ctx.has_plugin); a cycle warns and makes the whole order alphabetical.
func LoadOrder(toLoad []*Candidate) ([]*Candidate, []string) {
	var warns []string
	byKey := make(map[string]*Candidate, len(toLoad))
	for _, c := range toLoad {
		byKey[c.Key] = c
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	byName := map[string]string{}
	for _, k := range keys {
		if m := byKey[k].Manifest; m != nil && m.Name != "" {
			if _, taken := byName[m.Name]; !taken {
				byName[m.Name] = k // the alphabetically first key owns a shared name
			}
		}
	}

	deps := make(map[string][]string, len(keys)) // key -> keys it needs, sorted
	for _, k := range keys {
		m := byKey[k].Manifest
		if m == nil {
			continue
		}
		set := map[string]bool{}
		for _, r := range m.RequiresPlugins {
			if r.ID == "" {
				continue
			}
			dep, ok := r.ID, byKey[r.ID] != nil
			if !ok {
				dep, ok = byName[r.ID]
			}
			switch {
			case !ok:
				warns = append(warns, fmt.Sprintf("Plugin %s requires plugin '%s' which is not enabled/installed; loading anyway (probe availability at runtime via ctx.has_plugin). Run `hermes plugins enable %s` if it is installed.", k, r.ID, r.ID))
			case dep == k:
				warns = append(warns, fmt.Sprintf("Plugin %s declares a dependency on itself; ignoring", k))
			default:
				set[dep] = true
			}
		}
		for d := range set {
			deps[k] = append(deps[k], d)
		}
		sort.Strings(deps[k])
	}

	if cycle := findCycle(keys, deps); cycle != nil {
		warns = append(warns, fmt.Sprintf("Plugin dependency cycle detected (%s); falling back to alphabetical load order for all plugins", strings.Join(cycle, " -> ")))
		return pick(byKey, keys), warns
	}

	// Kahn's algorithm in rounds: everything ready in a round loads, sorted,
	// before anything it unblocks.
	pending := make(map[string]int, len(keys))
	users := map[string][]string{}
	for _, k := range keys {
		pending[k] = len(deps[k])
		for _, d := range deps[k] {
			users[d] = append(users[d], k)
		}
	}
	var ready []string
	for _, k := range keys {
		if pending[k] == 0 {
			ready = append(ready, k)
		}
	}
	ordered := make([]string, 0, len(keys))
	for len(ready) > 0 {
		sort.Strings(ready)
		ordered = append(ordered, ready...)
		var next []string
		for _, k := range ready {
			for _, u := range users[k] {
				if pending[u]--; pending[u] == 0 {
					next = append(next, u)
				}
			}
		}
		ready = next
	}
	return pick(byKey, ordered), warns
}

func pick(byKey map[string]*Candidate, keys []string) []*Candidate {
	out := make([]*Candidate, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// findCycle returns one dependency cycle as a closed path (a -> b -> a), or
// nil. Search order is alphabetical so the reported cycle is stable.
func findCycle(keys []string, deps map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(keys))
	var path []string
	var visit func(k string) []string
	visit = func(k string) []string {
		state[k] = onPath
		path = append(path, k)
		for _, d := range deps[k] {
			switch state[d] {
			case onPath:
				for i, p := range path {
					if p == d {
						return append(append([]string(nil), path[i:]...), d)
					}
				}
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[k] = done
		return nil
	}
	for _, k := range keys {
		if state[k] == unseen {
			if c := visit(k); c != nil {
				return c
			}
		}
	}
	return nil
}
