package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/limits"
	"github.com/hermes-go/hermes/internal/session"
)

// pairingFile caps what a pairing file may hold before it is parsed: real ones
// hold at most a few entries per platform (3 pending, the approved users).
var pairingFile = limits.Kind{Noun: "a pairing file", Fix: "fix the JSON by hand or move the file aside",
	MaxBytes: 4 << 20, MaxDepth: 8, MaxNodes: 200_000}

// MalformedError is a pairing file hermes could not read as a JSON object. Nothing
// is written over it: the caller reports it and the user fixes or moves it.
type MalformedError struct {
	Path string
	Err  error
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("%s is not a valid pairing file (%v); fix the JSON by hand or move the file aside: hermes has not changed it", e.Path, e.Err)
}

func (e *MalformedError) Unwrap() error { return e.Err }

// object is one pairing file: top-level keys to their raw values, so entries
// hermes does not touch are written back exactly as they were.
type object map[string]json.RawMessage

// readObject reads path as a JSON object; a missing file is an empty one.
func readObject(path string) (object, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseObject(data, path)
}

func readFile(path string) ([]byte, error) {
	data, err := home.ReadFileLimit(path, pairingFile.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// parseObject reads data (the document where names) as a JSON object;
// none is an empty one.
func parseObject(data []byte, where string) (object, error) {
	if data == nil {
		return object{}, nil
	}
	if err := limits.CheckJSON(data, where, pairingFile); err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // upstream reads utf-8-sig
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil // an empty file: what a crash before the first write leaves
	}
	var obj object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, &MalformedError{Path: where, Err: err}
	}
	if obj == nil { // the file says null
		return nil, &MalformedError{Path: where, Err: errors.New("want a JSON object, found null")}
	}
	return obj, nil
}

// encodeObject is obj as written: indented, keys sorted.
func encodeObject(obj object, where string) ([]byte, error) {
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", where, err)
	}
	return append(data, '\n'), nil
}

// writeObject replaces path with obj, atomically and mode 0600, keys sorted.
// The caller holds the directory's lock.
func writeObject(path string, obj object) error {
	data, err := encodeObject(obj, path)
	if err != nil {
		return err
	}
	return writeFile(path, data)
}

func writeFile(path string, data []byte) error {
	if err := config.WriteFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// The documents of the pairing store: upstream's file names without ".json".
func pendingName(platform string) string  { return platform + "-pending" }
func approvedName(platform string) string { return platform + "-approved" }

const limitsName = "_rate_limits"

// storeDir is the pairing directory and its lock: every read-modify-write of
// its files, by the gateway or by `hermes pairing`, holds the lock throughout.
// It is the file-based session.DocStore, upstream's layout (the default).
type storeDir struct {
	dir string
}

var _ session.DocStore = storeDir{}

func (d storeDir) path(name string) string { return filepath.Join(d.dir, name+".json") }

// DocWhere is the document's file.
func (d storeDir) DocWhere(name string) string { return d.path(name) }

// Docs reads the files.
func (d storeDir) Docs() session.DocReader { return d }

// Read is the file's bytes (nil: no file).
func (d storeDir) Read(_ context.Context, name string) ([]byte, error) {
	return readFile(d.path(name))
}

// Write replaces the file, atomically and mode 0600. The caller holds the lock.
func (d storeDir) Write(_ context.Context, name string, data []byte) error {
	return writeFile(d.path(name), data)
}

// Names lists the directory's documents; dot files are not ones.
func (d storeDir) Names(context.Context) ([]string, error) {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the pairing directory: %w", err)
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasPrefix(name, ".") {
			out = append(out, name)
		}
	}
	return out, nil
}

// LockedDocs runs fn with the directory's lock held.
func (d storeDir) LockedDocs(ctx context.Context, fn func(session.DocTx) error) error {
	return d.locked(ctx, func() error { return fn(d) })
}

// locked runs fn with the directory's lock held.
func (d storeDir) locked(ctx context.Context, fn func() error) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return fmt.Errorf("create the pairing directory %s: %w", d.dir, err)
	}
	unlock, err := config.LockFile(ctx, filepath.Join(d.dir, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// platformsIn lists the platforms that have a "<platform>-<suffix>" document
// among names, sorted; "_"-prefixed ones are shared state, not platforms.
func platformsIn(names []string, suffix string) []string {
	tail := "-" + suffix
	var out []string
	for _, n := range names {
		name, ok := strings.CutSuffix(n, tail)
		if !ok || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || validPlatform(name) != nil {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// legacyMergedSuffix marks a legacy file whose entries are in the new directory:
// merged once, it is not merged again (a user revoked since would come back).
const legacyMergedSuffix = ".merged"

// mergeLegacy brings the files of upstream's older directory ($HERMES_HOME/pairing)
// into the active one: entries of the active file win, the legacy file is then
// renamed <name>.merged. The caller holds the active directory's lock.
func (d storeDir) mergeLegacy(legacy string) error {
	if legacy == "" || sameDir(legacy, d.dir) {
		return nil
	}
	matches, err := filepath.Glob(filepath.Join(legacy, "*.json"))
	if err != nil || len(matches) == 0 {
		return nil
	}
	sort.Strings(matches)
	for _, src := range matches {
		if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		old, err := readObject(src)
		if err != nil {
			return fmt.Errorf("merge the legacy pairing file: %w", err)
		}
		dst := filepath.Join(d.dir, filepath.Base(src))
		cur, err := readObject(dst)
		if err != nil {
			return err
		}
		changed := false
		for k, v := range old {
			if _, ok := cur[k]; !ok {
				cur[k] = v
				changed = true
			}
		}
		if changed {
			if err := writeObject(dst, cur); err != nil {
				return err
			}
		}
		if err := os.Rename(src, src+legacyMergedSuffix); err != nil {
			return fmt.Errorf("mark the legacy pairing file %s as merged: %w", src, err)
		}
	}
	return nil
}

func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(fa, fb)
}
