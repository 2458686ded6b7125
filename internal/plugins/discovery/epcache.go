package discovery

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// The entry-point scan opens entry_points.txt in every distribution of every site
// directory, hundreds of files on a well-stocked interpreter, for the few that name
// hermes plugins. What it found is cached per site directory, keyed by the
// directory's modification time (installing or removing a distribution adds or
// removes a directory there) and by the entry_points.txt of each distribution
// that matters.
type epCache struct {
	Sites map[string]*siteScan `json:"sites"`
}

type siteScan struct {
	MTime int64        `json:"mtime"`
	Names []string     `json:"names"` // normalized names of every distribution in the site
	Dists []cachedDist `json:"dists"` // those with entry points in our groups
}

type cachedDist struct {
	Dir      string        `json:"dir"`
	Name     string        `json:"name"`
	Version  string        `json:"version"`
	MetaFile string        `json:"meta"`
	EPMTime  int64         `json:"ep_mtime"`
	EPs      []cachedEntry `json:"eps"`
}

type cachedEntry struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

func loadEPCache(path string) *epCache {
	c := &epCache{Sites: map[string]*siteScan{}}
	if path == "" {
		return c
	}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, c)
		if c.Sites == nil {
			c.Sites = map[string]*siteScan{}
		}
	}
	return c
}

// lookup returns the cached scan of site if it is still current.
func (c *epCache) lookup(site string, mtime int64) *siteScan {
	s := c.Sites[site]
	if s == nil || s.MTime != mtime {
		return nil
	}
	for _, d := range s.Dists {
		fi, err := os.Stat(filepath.Join(d.Dir, "entry_points.txt"))
		if err != nil || fi.ModTime().UnixNano() != d.EPMTime {
			return nil
		}
	}
	return s
}

// save writes the cache atomically; a cache that cannot be written is only slower.
func (c *epCache) save(path string) {
	if path == "" {
		return
	}
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".entry-points-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

func (s *siteScan) distributions(site string) []*distribution {
	out := make([]*distribution, 0, len(s.Dists))
	for _, d := range s.Dists {
		eps := make([]entryLine, len(d.EPs))
		for i, e := range d.EPs {
			eps[i] = entryLine{group: e.Group, name: e.Name, value: e.Value}
		}
		out = append(out, &distribution{site: site, dir: d.Dir, name: d.Name, version: d.Version, metaFile: d.MetaFile, eps: eps})
	}
	return out
}

func cachedOf(d *distribution) cachedDist {
	cd := cachedDist{Dir: d.dir, Name: d.name, Version: d.version, MetaFile: d.metaFile}
	if fi, err := os.Stat(filepath.Join(d.dir, "entry_points.txt")); err == nil {
		cd.EPMTime = fi.ModTime().UnixNano()
	}
	for _, e := range d.eps {
		cd.EPs = append(cd.EPs, cachedEntry{Group: e.group, Name: e.name, Value: e.value})
	}
	return cd
}
