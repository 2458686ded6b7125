package editor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// History is the input history shared by chat sessions: one file, one JSON
// string per line (so a multi-line entry stays one record, and a record torn
// by a crash is one line that fails to parse and is skipped). Sessions append
// under an advisory lock on path+".lock"; the file is compacted to the newest
// max entries once it holds twice as many lines, so it stays bounded without a
// rewrite per entry.
//
// A History is safe for use by several goroutines. Entries added by other
// sessions after OpenHistory are in the file but not in this value: each
// session walks its own snapshot plus what it added, as shells do.
type History struct {
	path string
	max  int

	mu      sync.Mutex
	entries []string
}

// OpenHistory reads the history at path, keeping its newest limit entries. A
// missing file is an empty history; lines that are not a JSON string (a torn
// last write, a foreign line) are skipped.
func OpenHistory(path string, limit int) (*History, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("open history %s: the entry limit must be positive, got %d", path, limit)
	}
	h := &History{path: path, max: limit}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	h.entries = parseHistory(b, limit)
	return h, nil
}

// parseHistory returns the newest limit well-formed entries of b, oldest first.
func parseHistory(b []byte, limit int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	// A pasted entry has no length cap, so neither has a line.
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) != nil || s == "" {
			continue
		}
		out = append(out, s)
	}
	if len(out) > limit {
		out = append([]string(nil), out[len(out)-limit:]...)
	}
	return out
}

// Add appends entry and persists it. Blank entries and a repeat of the newest
// entry are not recorded.
func (h *History) Add(entry string) error {
	if strings.TrimSpace(entry) == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == entry {
		return nil
	}
	h.entries = append(h.entries, entry)
	if len(h.entries) > h.max {
		h.entries = append([]string(nil), h.entries[len(h.entries)-h.max:]...)
	}
	if err := h.persist(entry); err != nil {
		return fmt.Errorf("save history %s: %w", h.path, err)
	}
	return nil
}

// Entries returns a copy of the history, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}

// Len is the number of entries.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// At is entry i, oldest first (0 <= i < Len).
func (h *History) At(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entries[i]
}

func record(entry string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(entry) // a string always encodes; Encode ends the line
	return b.Bytes()
}

// persist appends entry to the file under the lock, or compacts the file when
// it has grown to twice the limit.
func (h *History) persist(entry string) error {
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	lock := flock.New(h.path+".lock", flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return err
	}
	defer func() { _ = lock.Unlock() }()

	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	old, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	rec := record(entry)
	if bytes.Count(old, []byte{'\n'})+1 >= 2*h.max {
		// Other sessions' entries are in old too: keep the newest of all.
		all := parseHistory(append(append(old, '\n'), rec...), h.max)
		var b bytes.Buffer
		for _, e := range all {
			b.Write(record(e))
		}
		return renameio.WriteFile(h.path, b.Bytes(), 0o600)
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		// A torn last record: end its line so this one is not glued to it.
		rec = append([]byte{'\n'}, rec...)
	}
	_, err = f.Write(rec) // one write: the record lands whole or is the torn last line
	return err
}
