package catalog

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever a remote or a cache holds, parsing never panics, and every
// entry it keeps is pinned to a full SHA with a plain name.
func FuzzParse(f *testing.F) {
	f.Add([]byte(indexDoc))
	f.Add([]byte(catalogDoc))
	f.Add(seedCatalog)
	f.Add([]byte(`[{"name":"a","repo":"o/r","ref":"` + sha1 + `","subdir":"x/../y"}]`))
	f.Add([]byte("<html>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e1, _, _ := ParseIndex(b)
		e2, _, _, _ := ParseCatalog(b)
		for _, e := range append(e1, e2...) {
			if !isSHA(e.Ref) || !IsBareName(e.Name) {
				t.Fatalf("kept an invalid entry %+v", e)
			}
		}
	})
}

// FuzzSnapshot: a snapshot file with any content is either rejected or decodes
// to valid entries; it never panics.
func FuzzSnapshot(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, IndexCacheFile)
	os.WriteFile(path, []byte(indexDoc), 0o600)
	st, _ := os.Stat(path)
	p, _ := parseIndexPart([]byte(indexDoc))
	writeSnapshot(path+snapshotSuffix, st, &p)
	good, _ := os.ReadFile(path + snapshotSuffix)
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Give the damage a valid header and checksum, so the decoder itself is tested.
		head := len(snapshotMagic) + 4
		if len(b) >= head {
			copy(b, snapshotMagic)
			binary.LittleEndian.PutUint32(b[len(snapshotMagic):], crc32.Checksum(b[head:], castagnoli()))
		}
		snap := filepath.Join(t.TempDir(), "s")
		os.WriteFile(snap, b, 0o600)
		if p, ok := readSnapshot(snap, st); ok {
			for _, e := range p.lazy.all() {
				if !isSHA(e.Ref) || e.Name == "" {
					t.Fatalf("invalid entry %+v", e)
				}
			}
		}
	})
}
