package config

import (
	"fmt"
	"sort"
)

// Merge deep-merges over into the document, the way a NixOS deploy lays its
// settings onto the user's file: mappings are merged key by key, and anything
// else (a scalar, a list, null, or a mapping where the file has no mapping)
// replaces what the file holds. Keys the file has and over lacks stay, with
// their comments, and so does every comment around a changed value. It
// returns the dotted keys it changed, in order; nothing changes on an error.
func (d *Doc) Merge(over map[string]any) ([]string, error) {
	if err := d.ensureParsed(); err != nil {
		return nil, err
	}
	v, err := normalize(over, true)
	if err != nil {
		return nil, fmt.Errorf("cannot merge: %w", err)
	}
	// Each Set commits on its own; work on a copy so a failure halfway leaves d
	// as it was.
	work, err := Parse(d.Bytes(), d.name)
	if err != nil {
		return nil, err
	}
	var changed []string
	if err := work.mergeAt(nil, v.(map[string]any), &changed); err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		d.replace(work)
	}
	return changed, nil
}

func (d *Doc) mergeAt(prefix []string, over map[string]any, changed *[]string) error {
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Nix renders its attribute sets sorted; new keys land that way too
	for _, k := range keys {
		segs := append(append([]string(nil), prefix...), k)
		cur, ok := d.GetPath(segs)
		sub, isMap := over[k].(map[string]any)
		if _, curIsMap := cur.(map[string]any); ok && isMap && curIsMap {
			if err := d.mergeAt(segs, sub, changed); err != nil {
				return err
			}
			continue
		}
		if ok && equalValues(cur, over[k]) {
			continue // already so: no edit, so an unchanged deploy writes nothing
		}
		if err := d.SetPath(segs, over[k]); err != nil {
			return err
		}
		*changed = append(*changed, JoinPath(segs))
	}
	return nil
}
