package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Staging folders live inside the plugins directory (same file system, so publishing
// is one rename) and start with a dot (discovery skips them). They exist only while
// their creator holds the plugins-dir lock, so any found by a lock holder are stale.
const (
	lockFile       = ".hermes-plugins.lock"
	installPrefix  = ".install-"
	removePrefix   = ".remove-"
	txnFile        = "txn.json"
	stagedTree     = "plugin" // the new tree, inside a staging folder
	oldTree        = "old"    // the replaced tree, moved aside during publish
	repoTree       = "repo"   // the clone, before the plugin is cut out of it
	lockRetryEvery = 20 * time.Millisecond
)

// txn is written into a staging folder once the staged tree is complete; it lets the
// next run finish (or undo) a publish or remove that was interrupted.
type txn struct {
	Op   string `json:"op"` // "install" or "remove"
	Name string `json:"name"`
	Row  *Row   `json:"row,omitempty"` // install: the row to record; nil means no row
	// Tree identifies the staged tree (install), so recovery can tell whether it
	// has been published.
	Tree *fileID `json:"tree,omitempty"`
}

// lockPlugins takes the exclusive plugins-dir lock, waiting for another hermes that
// holds it; wait is called once if it has to wait.
func lockPlugins(ctx context.Context, dir string, wait func(path string)) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create plugins directory: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	fl := flock.New(path, flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		if wait != nil {
			wait(path)
		}
		ok, err = fl.TryLockContext(ctx, lockRetryEvery)
	}
	if err != nil || !ok {
		_ = fl.Close()
		if err == nil {
			err = errors.New("lock not acquired")
		}
		return nil, fmt.Errorf("wait for the plugins lock %s (another hermes is installing): %w", path, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

func writeTxn(stage string, t txn) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	tmp := filepath.Join(stage, txnFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(stage, txnFile)); err != nil {
		return err
	}
	syncDir(stage)
	return nil
}

func readTxn(stage string) (*txn, bool) {
	data, err := os.ReadFile(filepath.Join(stage, txnFile))
	if err != nil {
		return nil, false
	}
	var t txn
	if json.Unmarshal(data, &t) != nil || !safeName(t.Name) {
		return nil, false
	}
	return &t, true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// recoverStaging finishes or undoes what an interrupted run left in the plugins
// directory. It must be called with the plugins-dir lock held. Rules per staging
// folder:
//   - no txn.json: nothing was published yet → delete it (old state stays);
//   - install, the tree at the target is the staged one (same device and inode):
//     it was published → record its row (again), delete the folder (new state);
//   - install, otherwise: it was not → put a moved-aside old tree back, delete the
//     folder (old state);
//   - remove: the tree was moved away → drop the row, delete the folder (new state).
func recoverStaging(dir string, metaPath string, note func(string)) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read plugins directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || (!strings.HasPrefix(name, installPrefix) && !strings.HasPrefix(name, removePrefix)) {
			continue
		}
		stage := filepath.Join(dir, name)
		if err := recoverOne(dir, stage, metaPath, note); err != nil {
			return fmt.Errorf("recover interrupted operation in %s: %w", stage, err)
		}
	}
	return nil
}

func recoverOne(dir, stage, metaPath string, note func(string)) error {
	t, ok := readTxn(stage)
	if !ok {
		note(fmt.Sprintf("Removed stale staging folder %s left by an interrupted install.", filepath.Base(stage)))
		return os.RemoveAll(stage)
	}
	target := filepath.Join(dir, t.Name)
	switch t.Op {
	case "install":
		cur, ok := idOf(target)
		if !ok || t.Tree == nil || cur != *t.Tree {
			if old := filepath.Join(stage, oldTree); exists(old) && !exists(target) {
				if err := os.Rename(old, target); err != nil {
					return err
				}
			}
			note(fmt.Sprintf("An interrupted install of %s was rolled back.", t.Name))
			return os.RemoveAll(stage)
		}
		if err := updateRow(metaPath, t.Name, t.Row); err != nil {
			return err
		}
		note(fmt.Sprintf("Finished an interrupted install of %s.", t.Name))
		return os.RemoveAll(stage)
	case "remove":
		if exists(filepath.Join(stage, stagedTree)) && !exists(target) {
			if err := updateRow(metaPath, t.Name, nil); err != nil {
				return err
			}
			note(fmt.Sprintf("Finished an interrupted removal of %s.", t.Name))
		}
		return os.RemoveAll(stage)
	}
	return os.RemoveAll(stage)
}

// updateRow sets (row != nil) or deletes a row of the metadata file.
func updateRow(metaPath, name string, row *Row) error {
	md, err := ReadMetadata(metaPath)
	if err != nil {
		return err
	}
	if row == nil {
		if _, ok := md.Rows[name]; !ok && !containsStr(md.BadRows(), name) {
			return nil
		}
		md.Delete(name)
	} else {
		md.Set(name, *row)
	}
	return WriteMetadata(metaPath, md)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// safeName is upstream's plugin directory name rule plus "no leading dot" (hidden
// directories are never discovered and are where staging lives).
func safeName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.HasPrefix(name, ".") &&
		!strings.ContainsAny(name, "/\\\x00") && !strings.Contains(name, "..") && len(name) <= 128
}
