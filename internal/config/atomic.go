package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
)

// A writer's temp copy of a file is named ".<name>.tmp-<pid>-<random>": hidden, and
// saying which process wrote it, so that the next writer can tell the copies of a
// writer that was killed between writing and renaming (they would stay forever).
const tempInfix = ".tmp-"

// legacyTempAge is how old a temp copy named the way hermes named them before
// (".<name><digits>", no pid) must be before a writer deletes it.
const legacyTempAge = time.Minute

// testHookBeforeRename, when set (tests), runs with the temp copy's path just
// before it is renamed into place.
var testHookBeforeRename func(tmp string)

// writeAtomic writes data to a temp file in path's directory, fsyncs it and renames it
// over path, then fsyncs the directory. keepMode keeps an existing file's permissions;
// otherwise, and for new files, perm applies. It is called with path's lock held,
// and first deletes the temp copies dead writers left (removeDeadTemps).
func writeAtomic(path string, data []byte, perm os.FileMode, keepMode bool) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	removeDeadTemps(dir, base)
	mode := perm
	if keepMode {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	f, err := os.CreateTemp(dir, "."+base+tempInfix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: makes the rename itself durable
		_ = d.Close()
	}
	return nil
}

// removeDeadTemps deletes the temp copies of base in dir whose writer is gone.
// Every writer holds base's lock from before its temp exists until after its
// rename, and so does the caller: a copy found now belongs to no running write.
// Even so, only copies whose pid is not a running process go (a writer reaching
// the file by another path, through a symlink, takes another lock), and copies of
// the old pid-less naming only once they are older than legacyTempAge.
func removeDeadTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		switch {
		case strings.HasPrefix(rest, tempInfix):
			pidText, _, ok := strings.Cut(strings.TrimPrefix(rest, tempInfix), "-")
			pid, err := strconv.Atoi(pidText)
			if !ok || err != nil || pid <= 0 || pid == os.Getpid() || running(pid) {
				continue
			}
		case rest != "" && strings.Trim(rest, "0123456789") == "":
			info, err := e.Info()
			if err != nil || clock.Now().Sub(info.ModTime()) < legacyTempAge {
				continue
			}
		default:
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

// running reports whether a process with this pid exists (EPERM: it does, and is
// someone else's).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
