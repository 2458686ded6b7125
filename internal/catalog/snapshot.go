package catalog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// A snapshot is a cache file already parsed and validated, in a flat binary form
// laid out for search. A 10,000-entry index is ~6 MB of JSON: encoding/json needs
// ~90 ms for it, and even decoding 10,000 full entries from a binary form costs more
// than a hermes start. So the snapshot holds, per entry, only what ranking reads
// (name, tags, description, author and capability labels, already lower-cased) and
// the offset of the full entry, which is decoded for hits only. It sits next to the
// cache file (<cache>.snap), names the cache's size and modification time, carries
// a CRC-32C of its contents, and is ignored (and rebuilt) when any of that does not
// match. The JSON cache stays the file of record, in upstream's format.
const snapshotSuffix = ".snap"

var snapshotMagic = []byte("HERMESCAT\x03")

// castagnoli is built on first use: MakeTable costs ~0.15 ms of every command's start-up.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// fields are an entry's searchable text, lower-cased; lists are joined with NUL
// (a search term never contains one, so substring tests cannot straddle items).
type fields struct {
	name, tags, desc, author, labels string
}

const sep = "\x00"

// searchFields lower-cases what ranking reads. A curated entry's category and
// declared tool names count as tags (upstream's catalog search covers declared tools).
func searchFields(e *Entry) fields {
	tags := e.Tags
	if e.Origin == OriginCatalog {
		tags = append(append(append([]string{}, e.Tags...), e.Tools...), e.Category)
	}
	return fields{
		name: lower(e.Name), tags: lower(strings.Join(tags, sep)), desc: lower(e.Description),
		author: lower(e.Author), labels: lower(strings.Join(e.Capabilities(), sep)),
	}
}

func lower(s string) string { return string(appendLower(nil, s)) }

type snapWriter struct{ b []byte }

func (w *snapWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *snapWriter) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}
func (w *snapWriter) strs(l []string) {
	w.uint(uint64(len(l)))
	for _, s := range l {
		w.str(s)
	}
}

func encodeEntry(w *snapWriter, e *Entry) {
	for _, s := range []string{e.Name, e.Description, e.Author, e.Repo, e.Ref, e.Subdir, e.Homepage, e.Tier,
		e.Category, e.Version, e.DocsURL, e.RequiresHermes, e.Image, e.AddedAt, e.Origin} {
		w.str(s)
	}
	for _, l := range [][]string{e.Tags, e.Labels, e.Tools, e.Hooks, e.Middleware, e.Env, e.Platforms} {
		w.strs(l)
	}
	w.uint(uint64(int64(e.APIVersion)))
}

func writeSnapshot(path string, st fs.FileInfo, p *part) error {
	// Sections are built in buffers sized up front: growing one 5 MB buffer by
	// appends cost more than encoding it.
	dw := &snapWriter{b: make([]byte, 0, 512*len(p.entries))}
	sizes := make([]int, len(p.entries))
	for i := range p.entries {
		before := len(dw.b)
		encodeEntry(dw, &p.entries[i])
		sizes[i] = len(dw.b) - before
	}
	sw := &snapWriter{b: make([]byte, 0, 320*len(p.entries))}
	var scratch []byte
	lowerList := func(l []string) {
		scratch = scratch[:0]
		for i, s := range l {
			if i > 0 {
				scratch = append(scratch, sep...)
			}
			scratch = appendLower(scratch, s)
		}
		sw.uint(uint64(len(scratch)))
		sw.b = append(sw.b, scratch...)
	}
	for i := range p.entries {
		e := &p.entries[i]
		// The same fields as searchFields, lowered through one scratch buffer.
		tags := e.Tags
		if e.Origin == OriginCatalog {
			tags = append(append(append([]string{}, e.Tags...), e.Tools...), e.Category)
		}
		lowerList([]string{e.Name})
		lowerList(tags)
		lowerList([]string{e.Description})
		lowerList([]string{e.Author})
		lowerList(e.Capabilities())
		sw.uint(uint64(sizes[i]))
	}
	tw := &snapWriter{}
	tw.uint(uint64(len(p.removed)))
	for _, r := range p.removed {
		tw.str(r.Name)
		tw.str(r.Repo)
		tw.str(r.Reason)
		tw.str(r.Date)
	}
	tw.strs(p.skipped)
	hw := &snapWriter{}
	hw.uint(uint64(st.Size()))
	hw.uint(uint64(st.ModTime().UnixNano()))
	hw.uint(uint64(len(p.entries)))
	hw.uint(uint64(len(sw.b)))
	hw.uint(uint64(len(dw.b)))
	head := len(snapshotMagic) + 4
	out := make([]byte, head, head+len(hw.b)+len(sw.b)+len(dw.b)+len(tw.b))
	copy(out, snapshotMagic)
	out = append(append(append(append(out, hw.b...), sw.b...), dw.b...), tw.b...)
	binary.LittleEndian.PutUint32(out[len(snapshotMagic):], crc32.Checksum(out[head:], castagnoli()))
	return writeNoSync(path, out)
}

// writeNoSync writes path through a temporary file and a rename, without fsync:
// a snapshot is derived data (a torn one fails its checksum and is rebuilt), and
// syncing 5 MB here cost more than parsing the JSON.
func writeNoSync(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".snap-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

var errSnap = errors.New("bad snapshot")

type snapReader struct {
	s   string // the whole file: every decoded string is a slice of it (no copies)
	off int
	err error
}

func (r *snapReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(unsafe.Slice(unsafe.StringData(r.s[r.off:]), len(r.s)-r.off))
	if n <= 0 {
		r.err = errSnap
		return 0
	}
	r.off += n
	return v
}

func (r *snapReader) str() string {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.s)-r.off) {
		r.err = errSnap
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *snapReader) strs() []string {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.s)-r.off) {
		r.err = errSnap
		return nil
	}
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// lazyIndex is a snapshot-backed part: the file is mapped, not read (on this
// kind of VM every fresh anonymous page costs ~15 µs to fault in, so reading 5 MB
// into the heap costs more than the whole search), and the search section is
// scanned in place; only hits are decoded, into copies.
type lazyIndex struct {
	s          string // the mapped file
	n          int    // entries
	search     int    // start of the search section
	detailBase int    // start of the full entries
}

// each calls f with every entry's search fields and the span of its full entry,
// in file order, until f returns false. The file passed its checksum, so a
// decoding error here means a bug; it ends the scan.
func (l *lazyIndex) each(f func(fl *fields, off, end int) bool) {
	r := &snapReader{s: l.s[:l.detailBase], off: l.search}
	off := l.detailBase
	var fl fields
	for i := 0; i < l.n; i++ {
		fl.name, fl.tags, fl.desc, fl.author, fl.labels = r.str(), r.str(), r.str(), r.str(), r.str()
		size := r.uint()
		if r.err != nil || size > uint64(len(l.s)-off) {
			return
		}
		end := off + int(size)
		if !f(&fl, off, end) {
			return
		}
		off = end
	}
}

// entry decodes the full entry in s[off:end]. Its bytes are copied out first (one
// allocation per hit), so a result never points into the mapping. ok is false when
// it is not a valid entry.
func (l *lazyIndex) entry(off, end int) (Entry, bool) {
	own := strings.Clone(l.s[off:end])
	return decodeEntry(own)
}

func decodeEntry(s string) (Entry, bool) {
	r := &snapReader{s: s}
	var e Entry
	for _, f := range []*string{&e.Name, &e.Description, &e.Author, &e.Repo, &e.Ref, &e.Subdir, &e.Homepage, &e.Tier,
		&e.Category, &e.Version, &e.DocsURL, &e.RequiresHermes, &e.Image, &e.AddedAt, &e.Origin} {
		*f = r.str()
	}
	for _, f := range []*[]string{&e.Tags, &e.Labels, &e.Tools, &e.Hooks, &e.Middleware, &e.Env, &e.Platforms} {
		*f = r.strs()
	}
	e.APIVersion = int(int64(r.uint()))
	if r.err != nil || r.off != len(s) || !isSHA(e.Ref) || (e.Origin != OriginIndex && e.Origin != OriginCatalog) || e.Name == "" {
		return Entry{}, false
	}
	return e, true
}

func (l *lazyIndex) all() []Entry {
	out := make([]Entry, 0, l.n)
	l.each(func(_ *fields, off, end int) bool {
		if e, ok := l.entry(off, end); ok {
			out = append(out, e)
		}
		return true
	})
	return out
}

func readSnapshot(path string, st fs.FileInfo) (*part, bool) {
	s, ok := mapFile(path)
	head := len(snapshotMagic) + 4
	if !ok || len(s) < head || s[:len(snapshotMagic)] != string(snapshotMagic) {
		return nil, false
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if binary.LittleEndian.Uint32(b[len(snapshotMagic):]) != crc32.Checksum(b[head:], castagnoli()) {
		return nil, false
	}
	r := &snapReader{s: s, off: head}
	if r.uint() != uint64(st.Size()) || r.uint() != uint64(st.ModTime().UnixNano()) {
		return nil, false
	}
	n, searchLen, detailsLen := r.uint(), r.uint(), r.uint()
	if r.err != nil || n > uint64(len(s)) || searchLen > uint64(len(s)-r.off) || detailsLen > uint64(len(s)-r.off)-searchLen {
		return nil, false
	}
	l := &lazyIndex{s: s, n: int(n), search: r.off, detailBase: r.off + int(searchLen)}
	r.off = l.detailBase + int(detailsLen)
	p := &part{lazy: l}
	nr := r.uint()
	if r.err != nil || nr > uint64(len(s)) {
		return nil, false
	}
	for i := uint64(0); i < nr; i++ {
		p.removed = append(p.removed, Removed{Name: strings.Clone(r.str()), Repo: strings.Clone(r.str()), Reason: strings.Clone(r.str()), Date: strings.Clone(r.str())})
	}
	p.skipped = r.strs()
	for i := range p.skipped {
		p.skipped[i] = strings.Clone(p.skipped[i])
	}
	if r.err != nil || r.off != len(s) {
		return nil, false
	}
	return p, true
}

// isSHA reports a full 40-hex commit id.
func isSHA(s string) bool { return allIn(s, 40, 40, isHex) }
