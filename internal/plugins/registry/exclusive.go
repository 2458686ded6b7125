package registry

// AddExclusiveProvider records p for a slot only one object may fill (a
// context engine: upstream allows one per manager). The same object
// registered again (a restarted plugin) is kept once; any other, from this
// plugin or another, is refused: holder names the plugin holding the slot and
// nothing is recorded.
func (r *Registry) AddExclusiveProvider(plugin string, o Other, p Provider) (holder string, ok bool) {
	r.mu.Lock()
	for _, k := range r.keys {
		e := r.entries[k]
		lists := [][]Provider{e.pending.providers}
		if e.loaded {
			lists = append(lists, e.committed.providers)
		}
		for _, list := range lists {
			for _, q := range list {
				if q.Kind != p.Kind {
					continue
				}
				r.mu.Unlock()
				if k == plugin && q.Name == p.Name {
					return "", true
				}
				return k, false
			}
		}
	}
	e := r.entryLocked(plugin)
	e.pending.providers = append(e.pending.providers, p)
	e.pending.other = append(e.pending.other, o)
	live := e.live
	r.mu.Unlock()
	if live {
		r.Commit(plugin)
	}
	return "", true
}
