//go:build !unix

package catalog

import "os"

// mapFile reads path (no mmap on this platform).
func mapFile(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}
