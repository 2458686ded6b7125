package discovery

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The entry-point scan opens entry_points.txt in every distribution of every site
// directory, hundreds of files on a well-stocked interpreter, for the few that name
// hermes plugins. What it found is cached per site directory, keyed by the
// directory's modification time (installing or removing a distribution adds or
// removes a directory there) and by the modification time and size of the
// entry_points.txt of every distribution, ours or not: legacy editable installs
// rewrite it in place, so a distribution without our groups can gain them. A stat
// per distribution is far cheaper than the open and read it saves.
type epCache struct {
	Format int                  `json:"format"`
	Sites  map[string]*siteScan `json:"sites"`
}

// epCacheFormat names what a siteScan records; caches of another format are dropped.
const epCacheFormat = 4 // 4: the memory-provider group is kept too

// siteScan is what one site directory held. The lists of every distribution are
// single newline-joined strings: decoding hundreds of JSON strings would cost more
// than the scan they save.
type siteScan struct {
	MTime    int64        `json:"mtime"`
	Names    string       `json:"names"`     // normalized names of every distribution in the site
	Dists    []cachedDist `json:"dists"`     // those with entry points in our groups
	DistDirs string       `json:"dist_dirs"` // every .dist-info / .egg-info directory's name
	Stamp    uint64       `json:"stamp"`     // of their entry_points.txt files (epStamp)
}

// epStamp folds the state of each distribution's entry_points.txt, its
// modification time and size (or that it is absent, so creating it is noticed), into
// one FNV-1a hash.
type epStamp struct{ h hash.Hash64 }

func newEPStamp() epStamp { return epStamp{fnv.New64a()} }

func (s epStamp) add(name string, mtime, size int64) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(mtime))
	binary.LittleEndian.PutUint64(b[8:], uint64(size))
	s.h.Write([]byte(name))
	s.h.Write(b[:])
}

func (s epStamp) sum() uint64 { return s.h.Sum64() }

// statEP stats site/name/entry_points.txt: its modification time and size, -1 and -1
// when it does not exist, with absent set (any other failure is left for the read
// to report).
func statEP(site, name string) (mtime, size int64, absent bool) {
	fi, err := os.Stat(filepath.Join(site, name, "entry_points.txt"))
	if err != nil {
		return -1, -1, errors.Is(err, fs.ErrNotExist)
	}
	return fi.ModTime().UnixNano(), fi.Size(), false
}

type cachedDist struct {
	Dir      string        `json:"dir"`
	Name     string        `json:"name"`
	Version  string        `json:"version"`
	MetaFile string        `json:"meta"`
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
		if json.Unmarshal(b, c) != nil || c.Format != epCacheFormat || c.Sites == nil {
			c.Sites = map[string]*siteScan{}
		}
	}
	c.Format = epCacheFormat
	return c
}

// lookup returns the cached scan of site if it is still current.
func (c *epCache) lookup(site string, mtime int64) *siteScan {
	s := c.Sites[site]
	if s == nil || s.MTime != mtime {
		return nil
	}
	h := newEPStamp()
	for rest := s.DistDirs; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, "\n")
		mtime, size, _ := statEP(site, name)
		h.add(name, mtime, size)
	}
	if h.sum() != s.Stamp {
		return nil
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
	for _, e := range d.eps {
		cd.EPs = append(cd.EPs, cachedEntry{Group: e.group, Name: e.name, Value: e.value})
	}
	return cd
}
