package config

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Snapshot serves a Store's document to hot read paths (ctx.call_mcp's
// allowlist, capability checks, ctx.get_config: every call reads the file
// fresh, as upstream, so an edit counts at once). It stats the file and parses
// it again only when it changed: another inode (every write hermes makes is
// a rename), size or modification time. The Doc it returns is shared: read
// it, never edit it.
type Snapshot struct {
	Store Store

	mu   sync.Mutex
	info os.FileInfo
	doc  *Doc
}

// Load is Store.Load, from the cache while the file is unchanged.
func (s *Snapshot) Load() (*Doc, error) {
	fi, err := os.Stat(s.Store.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return s.Store.Load()
	}
	if err != nil {
		return s.Store.Load() // says what is wrong
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.doc != nil && sameFile(s.info, fi) {
		return s.doc, nil
	}
	doc, err := s.Store.Load()
	if err != nil {
		return nil, err
	}
	s.info, s.doc = nil, nil
	// The kernel stamps files with a coarse clock (up to 10 ms a tick): a file
	// written just now may be written again with the same time and size, so
	// only a file older than a few ticks is cached.
	if time.Since(fi.ModTime()) > settled {
		s.info, s.doc = fi, doc
	}
	return doc, nil
}

const settled = 50 * time.Millisecond

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
