package install

import (
	"os"
	"syscall"
)

// fileID identifies a directory across renames (device and inode), so recovery can
// tell whether the staged tree is the one now in place.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func idOf(path string) (fileID, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino)}, true //nolint:unconvert // widths differ by platform
}
