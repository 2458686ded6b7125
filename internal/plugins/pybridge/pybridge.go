// Package pybridge ships the Python side of the plugin protocol inside the binary and
// unpacks it, once per content version, into a cache directory the interpreter can run.
package pybridge

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

//go:embed all:bridge
var files embed.FS

// Script is the entry file inside an unpacked bridge directory.
const Script = "_hermes_bridge.py"

var (
	hashOnce sync.Once
	hash     string
)

// Version is a short content hash of the embedded bridge; it names the cache directory,
// so a new binary never runs a stale bridge.
func Version() string {
	hashOnce.Do(func() {
		hash = contentHash(files)
	})
	return hash
}

func contentHash(fsys fs.FS) string {
	h := sha256.New()
	var paths []string
	_ = walkSource(fsys, func(p string, d fs.DirEntry) error {
		if !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		b, _ := fs.ReadFile(fsys, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// walkSource walks the bridge's source files (and directories) in fsys. Bytecode is
// left out: "all:bridge" embeds whatever is in the source tree at build time, so a
// local Python run that cached a __pycache__ there must neither change the version
// nor ship bytecode compiled from another copy of the files.
func walkSource(fsys fs.FS, fn func(p string, d fs.DirEntry) error) error {
	return fs.WalkDir(fsys, "bridge", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return fs.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".pyc") || strings.HasSuffix(p, ".pyo")) {
			return nil
		}
		return fn(p, d)
	})
}

// Ensure unpacks the bridge under cacheDir (if not already there) and returns the path
// of its entry script. Unpacking goes to a temporary sibling that is renamed into
// place, so concurrent hermes processes never see a half-written bridge.
func Ensure(cacheDir string) (string, error) {
	dir := filepath.Join(cacheDir, "pybridge", Version())
	script := filepath.Join(dir, Script)
	if _, err := os.Stat(script); err == nil {
		return script, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("create bridge cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-")
	if err != nil {
		return "", fmt.Errorf("create bridge cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	err = walkSource(files, func(p string, d fs.DirEntry) error {
		rel, _ := filepath.Rel("bridge", filepath.FromSlash(p))
		target := filepath.Join(tmp, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		return "", fmt.Errorf("unpack python bridge: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race: its copy is identical.
		if _, statErr := os.Stat(script); statErr == nil {
			return script, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("install python bridge: %w", err)
		}
	}
	return script, nil
}
