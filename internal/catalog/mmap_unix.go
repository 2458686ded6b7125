//go:build unix

package catalog

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps path read-only and returns its bytes as a string. The mapping is
// never unmapped: strings handed out by a search are copies, but the scan itself
// reads the mapping, and a catalog lives as long as the short command using it.
// Snapshots are only ever replaced by rename, never rewritten in place; a file
// truncated under a running search faults, which Catalog turns into a fallback.
func mapFile(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || st.Size() > 1<<30 {
		return "", false
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return "", false
	}
	return unsafe.String(&b[0], len(b)), true
}
