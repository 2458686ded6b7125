package config

import (
	"context"
	"os"
)

// LockFile takes the exclusive sidecar lock at path (created 0600), waiting until
// ctx is done; the returned func releases it. Other hermes stores that keep files
// beside config.yaml (the gateway's pairing files) serialise their read-modify-write
// through it, as Store.Update does.
func LockFile(ctx context.Context, path string) (unlock func(), err error) {
	return lockFile(ctx, path)
}

// WriteFileAtomic replaces path with data: a temp copy in the same directory,
// fsynced, renamed over path, the directory fsynced; the file gets perm. Call it
// with path's lock held (LockFile), so the temp copies of killed writers can be
// told apart and removed.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, false)
}
