package catalog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/google/renameio/v2"
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

var snapshotMagic = []byte("HERMESCAT\x02")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	details := make([][]byte, len(p.entries))
	for i := range p.entries {
		dw := &snapWriter{}
		encodeEntry(dw, &p.entries[i])
		details[i] = dw.b
	}
	w := &snapWriter{}
	w.uint(uint64(st.Size()))
	w.uint(uint64(st.ModTime().UnixNano()))
	w.uint(uint64(len(p.entries)))
	for i := range p.entries {
		f := searchFields(&p.entries[i])
		for _, s := range []string{f.name, f.tags, f.desc, f.author, f.labels} {
			w.str(s)
		}
		w.uint(uint64(len(details[i])))
	}
	for _, d := range details {
		w.b = append(w.b, d...)
	}
	w.uint(uint64(len(p.removed)))
	for _, r := range p.removed {
		w.str(r.Name)
		w.str(r.Repo)
		w.str(r.Reason)
		w.str(r.Date)
	}
	w.strs(p.skipped)
	out := append([]byte{}, snapshotMagic...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(w.b, castagnoli))
	out = append(out, w.b...)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(path, out, 0o600)
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

// lazyIndex is a snapshot-backed part: search fields for every entry, full
// entries decoded on demand.
type lazyIndex struct {
	s    string
	recs []lazyRec
}

type lazyRec struct {
	fields
	off, end int // the full entry's bytes in s
}

// entry decodes entry i; ok is false when its bytes do not decode to a valid entry
// (the checksum makes that a bug, not damage, but it is never trusted blindly).
func (l *lazyIndex) entry(i int) (Entry, bool) {
	rec := l.recs[i]
	r := &snapReader{s: l.s[:rec.end], off: rec.off}
	var e Entry
	for _, f := range []*string{&e.Name, &e.Description, &e.Author, &e.Repo, &e.Ref, &e.Subdir, &e.Homepage, &e.Tier,
		&e.Category, &e.Version, &e.DocsURL, &e.RequiresHermes, &e.Image, &e.AddedAt, &e.Origin} {
		*f = r.str()
	}
	for _, f := range []*[]string{&e.Tags, &e.Labels, &e.Tools, &e.Hooks, &e.Middleware, &e.Env, &e.Platforms} {
		*f = r.strs()
	}
	e.APIVersion = int(int64(r.uint()))
	if r.err != nil || r.off != rec.end || !isSHA(e.Ref) || (e.Origin != OriginIndex && e.Origin != OriginCatalog) || e.Name == "" {
		return Entry{}, false
	}
	return e, true
}

func (l *lazyIndex) all() []Entry {
	out := make([]Entry, 0, len(l.recs))
	for i := range l.recs {
		if e, ok := l.entry(i); ok {
			out = append(out, e)
		}
	}
	return out
}

func readSnapshot(path string, st fs.FileInfo) (*part, bool) {
	b, err := os.ReadFile(path)
	head := len(snapshotMagic) + 4
	if err != nil || len(b) < head || string(b[:len(snapshotMagic)]) != string(snapshotMagic) {
		return nil, false
	}
	if binary.LittleEndian.Uint32(b[len(snapshotMagic):]) != crc32.Checksum(b[head:], castagnoli) {
		return nil, false
	}
	// b is never written again, so the strings may share its memory.
	s := unsafe.String(&b[0], len(b))
	r := &snapReader{s: s, off: head}
	if r.uint() != uint64(st.Size()) || r.uint() != uint64(st.ModTime().UnixNano()) {
		return nil, false
	}
	n := r.uint()
	if r.err != nil || n > uint64(len(s)) {
		return nil, false
	}
	l := &lazyIndex{s: s, recs: make([]lazyRec, n)}
	off := 0
	for i := range l.recs {
		rec := &l.recs[i]
		rec.name, rec.tags, rec.desc, rec.author, rec.labels = r.str(), r.str(), r.str(), r.str(), r.str()
		size := r.uint()
		if r.err != nil || size > uint64(len(s)) {
			return nil, false
		}
		rec.off, rec.end = off, off+int(size)
		off = rec.end
	}
	base := r.off
	if off > len(s)-base {
		return nil, false
	}
	for i := range l.recs {
		l.recs[i].off += base
		l.recs[i].end += base
	}
	r.off = base + off
	p := &part{lazy: l}
	nr := r.uint()
	if r.err != nil || nr > uint64(len(s)) {
		return nil, false
	}
	for i := uint64(0); i < nr; i++ {
		p.removed = append(p.removed, Removed{Name: r.str(), Repo: r.str(), Reason: r.str(), Date: r.str()})
	}
	p.skipped = r.strs()
	if r.err != nil || r.off != len(s) {
		return nil, false
	}
	return p, true
}

// isSHA is shaRE without the regexp machinery.
func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
