package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/limits"
)

// Store is the config file on disk, usually $HERMES_HOME/config.yaml.
type Store struct {
	Path string
	// PluginsDir, when set, has Update bring an older file up to the current
	// schema before its edit, in the same write: an edit must never land on an
	// unmigrated file, whose plugins.enabled it would create and so keep the
	// v21 migration from grandfathering the installed plugins.
	PluginsDir string
}

// lockRetry is how often a waiting writer retries the sidecar lock.
const lockRetry = 5 * time.Millisecond

// Load reads and parses the file; a missing file is an empty document, not an error.
func (s Store) Load() (*Doc, error) {
	data, err := home.ReadFileLimit(s.Path, limits.Config.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		d := NewDoc()
		d.name = s.Path
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, s.Path)
}

// Update runs fn on a fresh parse of the file while holding the sidecar lock
// "<path>.lock", and writes the result atomically if fn changed the bytes. Because the
// file is re-read under the lock, concurrent updates from other goroutines or hermes
// processes are never lost. A missing file starts as "_config_version: 21"; if fn returns
// an error, or the existing file does not parse, nothing is written.
func (s Store) Update(ctx context.Context, fn func(d *Doc) error) error {
	if s.Path == "" {
		return errors.New("config path is empty: set HERMES_HOME or pass a config path")
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	unlock, err := lockFile(ctx, s.Path+".lock")
	if err != nil {
		return err
	}
	defer unlock()

	target, err := writeTarget(s.Path)
	if err != nil {
		return err
	}
	data, err := home.ReadFileLimit(target, limits.Config.MaxBytes)
	var d *Doc
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d, err = Parse([]byte(fmt.Sprintf("%s: %d\n", VersionKey, LatestVersion)), s.Path)
		if err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("read config: %w", err)
	default:
		if d, err = Parse(data, s.Path); err != nil {
			return err
		}
	}
	before := d.Bytes()
	if s.PluginsDir != "" {
		if _, err := Migrate(d, s.PluginsDir); err != nil {
			return err
		}
	}
	if err := fn(d); err != nil {
		return err
	}
	after := d.Bytes()
	if bytes.Equal(before, after) {
		return nil
	}
	// What is written must read back: an edit may not grow the file past the caps.
	if err := checkLimits(after, s.Path); err != nil {
		return err
	}
	if err := writeAtomic(target, after, 0o600, true); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// writeTarget follows a symlinked config file (common with dotfile managers) so the
// atomic rename replaces the real file instead of the link.
func writeTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symlink whose target cannot be resolved: %w; fix or remove the link", path, err)
	}
	return real, nil
}

// lockFile takes an exclusive flock on a sidecar file, waiting until ctx is done. The
// lock lives beside the data file because an atomic rename replaces the data file's inode.
func lockFile(ctx context.Context, path string) (func(), error) {
	fl := flock.New(path, flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		_ = fl.Close()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return nil, &lockTimeoutError{path: path, err: err}
		case err == nil || ctx.Err() != nil:
			if err == nil {
				err = errors.New("lock not acquired")
			}
			return nil, fmt.Errorf("wait for lock %s (another hermes may be writing it): %w", path, err)
		}
		// Not contention: the lock file itself cannot be opened (permissions, a
		// read-only file system, a directory in its place).
		return nil, fmt.Errorf("cannot open the lock file %s: %w", path, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// lockTimeoutError is a lock wait that ran out of time; it unwraps to
// context.DeadlineExceeded without repeating it in the message.
type lockTimeoutError struct {
	path string
	err  error
}

func (e *lockTimeoutError) Error() string {
	return fmt.Sprintf("timed out waiting for the lock %s (another hermes may be writing it)", e.path)
}

func (e *lockTimeoutError) Unwrap() error { return e.err }
