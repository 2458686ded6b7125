package scan

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

const (
	// maxLineScan: a longer line is evaluated in windows around each literal
	// (lineBack before it, lineWindow after), once per window and rule, so the work
	// stays linear in the line's length instead of rules × length per literal.
	maxLineScan = 8 << 10
	lineWindow  = 4 << 10
	lineBack    = 256
	// maxLongLine: rules are checked on the first maxLongLine bytes of a line. Past
	// that, a literal of some rule gets the line reported as long_line_unscanned
	// (high) instead: a 50 MB one-line file costs one automaton pass, not minutes of
	// regular expressions, and cannot hide a payload without being flagged.
	maxLongLine = 1 << 20
	// mmapMin: files at least this big are mapped instead of read.
	mmapMin = 256 << 10
	// hitBatch bounds the literal-hit buffer; the automaton resumes after each batch.
	hitBatch = 4096
)

type targetKind uint8

const (
	kRule targetKind = iota
	kTripleQuote
	kInvisible
	kSignal
	kHint // scanner v2: marks the file for the shell, library and reference passes (v2.go)
)

type target struct {
	kind targetKind
	idx  int
}

// invisible is upstream's INVISIBLE_CHARS with the names it reports.
var invisible = []struct {
	r    rune
	name string
}{
	{'\u200b', "zero-width space"}, {'\u200c', "zero-width non-joiner"}, {'\u200d', "zero-width joiner"},
	{'\u2060', "word joiner"}, {'\u2062', "invisible times"}, {'\u2063', "invisible separator"},
	{'\u2064', "invisible plus"}, {'\ufeff', "BOM/zero-width no-break space"},
	{'\u202a', "LTR embedding"}, {'\u202b', "RTL embedding"}, {'\u202c', "pop directional"},
	{'\u202d', "LTR override"}, {'\u202e', "RTL override"}, {'\u2066', "LTR isolate"}, {'\u2067', "RTL isolate"},
	{'\u2068', "first strong isolate"}, {'\u2069', "pop directional isolate"},
}

// engine is the automaton over every literal, built once.
type engine struct {
	rules   []*rule
	ac      *acMatcher
	lits    []string
	lens    []int
	targets [][]target
}

// getEngine builds the automaton on first use (not at init: most commands never scan).
var getEngine = sync.OnceValue(buildEngine)

func buildEngine() *engine {
	e := &engine{}
	index := map[string]int{}
	var lits []string
	addLit := func(l string, t target) {
		key := strings.ToLower(l)
		if t.kind == kInvisible {
			key = l // raw UTF-8 bytes, no folding concerns (no ASCII letters)
		}
		i, ok := index[key]
		if !ok {
			i = len(lits)
			index[key] = i
			lits = append(lits, key)
			e.targets = append(e.targets, nil)
		}
		for _, have := range e.targets[i] {
			if have == t {
				return
			}
		}
		e.targets[i] = append(e.targets[i], t)
	}
	e.rules = getRules()
	for _, r := range e.rules {
		for _, l := range r.lits {
			addLit(l, target{kRule, r.idx})
		}
	}
	addLit(`"""`, target{kind: kTripleQuote})
	addLit(`'''`, target{kind: kTripleQuote})
	for i, c := range invisible {
		addLit(string(c.r), target{kInvisible, i})
	}
	for i, sg := range signals {
		for _, l := range sg.lits {
			addLit(l, target{kSignal, i})
		}
	}
	for i, hs := range hintLits {
		for _, l := range hs {
			addLit(l, target{kHint, i})
		}
	}
	e.ac = newAC(lits)
	e.lits = lits
	e.lens = e.ac.lens
	return e
}

// fileScanner holds one worker's reusable buffers.
type fileScanner struct {
	opts    Options
	buf     []byte
	hits    []hit
	done    []uint64 // per line: rules already evaluated
	winEnd  []int    // per rule: end of the last window evaluated on a long line
	lower   []byte   // the current line, lower-cased
	declEnv map[string]bool
	binary  bool   // the data are a binary's printable strings (binary.go)
	py      *pyRun // receives the .py sources for the Python analysis (python.go)
}

func newFileScanner(opts Options) *fileScanner {
	fs := &fileScanner{opts: opts, hits: make([]hit, 0, hitBatch+8),
		done: make([]uint64, (len(getRules())+63)/64), winEnd: make([]int, len(getRules())), declEnv: map[string]bool{}}
	for _, v := range opts.RequiresEnv {
		fs.declEnv[strings.ToUpper(v)] = true
	}
	return fs
}

// scanPath reads (or maps) one file and scans it. The file is opened without
// following a symlink and without blocking, and must still be a regular file: the
// walk saw one, but the tree may change under us (a FIFO swapped in must not hang).
func (fsc *fileScanner) scanPath(job fileJob) []Finding {
	unreadable := func(err error) []Finding {
		return []Finding{structFinding("unreadable_file", sevMedium, "structural", job.rel, "unreadable file",
			"file could not be read, so it was not scanned: "+errText(err))}
	}
	fd, err := unix.Open(job.abs, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return unreadable(&os.PathError{Op: "open", Path: job.abs, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return unreadable(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	size := int(st.Size)
	var data []byte
	if size >= mmapMin {
		m, err := unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_PRIVATE)
		if err != nil {
			return unreadable(err)
		}
		defer unix.Munmap(m)
		_ = unix.Madvise(m, unix.MADV_SEQUENTIAL)
		data = m
	} else {
		if cap(fsc.buf) < size+1 {
			fsc.buf = make([]byte, size+1+size/4)
		}
		b := fsc.buf[:cap(fsc.buf)]
		n := 0
		for n < len(b) {
			k, err := unix.Read(fd, b[n:])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return unreadable(err)
			}
			if k == 0 {
				break
			}
			n += k
			if n == len(b) { // grew since fstat: keep reading
				nb := make([]byte, 2*len(b))
				copy(nb, b)
				fsc.buf, b = nb, nb
			}
		}
		data = b[:n]
	}
	if job.other {
		return fsc.scanOther(job.rel, data)
	}
	if fsc.py != nil && strings.EqualFold(path.Ext(job.rel), ".py") {
		fsc.py.add(job.rel, data)
	}
	return fsc.scanData(job.rel, data)
}

// fileState is everything scanData knows about one file while walking its hits.
type fileState struct {
	eng  *engine
	fsc  *fileScanner
	rel  string
	ext  string
	data []byte
	pc   pathContext
	out  []Finding
	// current line
	lineNo, lineStart, lineEnd int
	countedTo                  int
	docLine                    bool // inside or on the boundary of a triple-quoted string
	inDoc                      bool // state after the current line
	invisibleDone              bool
	longReported               bool
	lowerOK                    bool
	// lazily computed per-file context
	owners   *ownerTracker
	mainBody map[int]bool
	fences   *fenceTracker
	sig      signalState
	hints    uint8           // hint bits of v2.go seen anywhere in the file
	hintAt   [numHints][]int // the lines holding each kind of hint (capped)
}

func (fsc *fileScanner) scanData(rel string, data []byte) []Finding {
	st := &fileState{eng: getEngine(), fsc: fsc, rel: rel, ext: strings.ToLower(path.Ext(rel)), pc: contextFor(rel)}
	var notes []Finding
	// utf-8-sig: a leading BOM is the encoding, not content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	st.data = data
	// Upstream skips a file that does not decode; a payload behind one stray byte
	// would then go unseen, so it is scanned as bytes and the oddity reported.
	probe := data
	if len(probe) > 8<<10 {
		probe = probe[:8<<10]
	}
	if bytes.IndexByte(probe, 0) >= 0 {
		notes = append(notes, structFinding("binary_content", sevMedium, "structural", rel, "NUL bytes in a text file",
			"file has a text extension but binary content; it was scanned as bytes"))
	} else if !utf8.Valid(data) {
		notes = append(notes, structFinding("invalid_utf8", sevMedium, "structural", rel, "invalid UTF-8",
			"file is not valid UTF-8; it was scanned as bytes"))
	}
	st.lineNo, st.lineStart, st.lineEnd = 0, -1, -1
	clear(fsc.winEnd)
	pos, state := 0, uint32(0)
	for pos < len(data) {
		fsc.hits, pos, state = st.eng.ac.scan(data, pos, state, fsc.hits[:0], hitBatch)
		for _, h := range fsc.hits {
			st.onHit(h.end-st.eng.lens[h.lit], h.end, h.lit)
		}
	}
	st.out = append(st.out, st.sig.findings(st)...)
	sort.SliceStable(st.out, func(i, j int) bool { return st.out[i].Line < st.out[j].Line })
	return fsc.refine(st, append(notes, st.out...))
}

// enterLine makes the line holding offset start current.
func (st *fileState) enterLine(start int) {
	d := st.data
	ls := bytes.LastIndexByte(d[:start], '\n') + 1
	le := bytes.IndexByte(d[start:], '\n')
	if le < 0 {
		le = len(d)
	} else {
		le += start
	}
	if st.lineStart < 0 {
		st.lineNo = 1 + bytes.Count(d[:ls], []byte{'\n'})
	} else {
		st.lineNo += bytes.Count(d[st.countedTo:ls], []byte{'\n'})
	}
	st.countedTo = ls
	st.lineStart, st.lineEnd = ls, le
	clear(st.fsc.done)
	st.invisibleDone, st.longReported, st.lowerOK = false, false, false
	// Triple-quote bookkeeping (upstream _compute_docstring_lines): each line whose
	// count of one marker is odd toggles "inside"; a line inside, or holding a marker,
	// is docstring prose. Only lines holding a marker change the state, and those
	// lines always have a hit, so they always pass through here.
	line := d[ls:le]
	c1, c2 := 0, 0
	if bytes.IndexByte(line, '"') >= 0 || bytes.IndexByte(line, '\'') >= 0 {
		c1, c2 = bytes.Count(line, []byte(`"""`)), bytes.Count(line, []byte(`'''`))
	}
	was := st.inDoc
	if (c1+c2)%2 == 1 {
		st.inDoc = !st.inDoc
	}
	st.docLine = was || st.inDoc || c1 > 0 || c2 > 0
}

func (st *fileState) onHit(start, end, lit int) {
	if start >= st.lineEnd || st.lineStart < 0 {
		st.enterLine(start)
	}
	for _, t := range st.eng.targets[lit] {
		switch t.kind {
		case kInvisible:
			if !st.invisibleDone {
				st.invisibleDone = true
				c := invisible[t.idx]
				st.out = append(st.out, Finding{PatternID: "invisible_unicode", Severity: sevHigh, Category: "injection",
					File: st.rel, Line: st.lineNo, Match: fmt.Sprintf("U+%04X (%s)", c.r, c.name),
					Description: fmt.Sprintf("invisible unicode character %s (possible text hiding/injection)", c.name)})
			}
		case kRule:
			if st.docLine {
				continue
			}
			if start-st.lineStart >= maxLongLine {
				if !st.longReported {
					st.longReported = true
					st.out = append(st.out, Finding{PatternID: "long_line_unscanned", Severity: sevHigh, Category: "structural",
						File: st.rel, Line: st.lineNo, Match: fmt.Sprintf("line of %d bytes", st.lineEnd-st.lineStart),
						Description: fmt.Sprintf("line is %d bytes long; rules were checked on its first %d bytes only and rule keywords occur after that (possible hidden payload)",
							st.lineEnd-st.lineStart, maxLongLine)})
				}
				continue
			}
			st.evalRule(st.eng.rules[t.idx], start, end)
		case kHint:
			st.onHint(t.idx)
		case kSignal:
			if !st.docLine {
				st.sig.onSignal(st, t.idx, start, lit)
			}
		}
	}
}

func (st *fileState) evalRule(r *rule, start, end int) {
	done := st.fsc.done
	if done[r.idx/64]&(1<<(r.idx%64)) != 0 {
		return
	}
	if st.pc.code && codeExempt[r.id] {
		done[r.idx/64] |= 1 << (r.idx % 64) // dropped on code files anyway
		return
	}
	line := st.data[st.lineStart:st.lineEnd]
	if r.pre != nil && !r.pre(st.data, start) {
		return
	}
	if r.anchored != nil {
		// Run at this literal only; another occurrence on the line gets its own try.
		we := st.lineEnd
		if we-start > lineWindow {
			we = start + lineWindow
		}
		if !r.anchored.Match(st.data[start:we]) {
			return
		}
		done[r.idx/64] |= 1 << (r.idx % 64)
		st.emit(r, st.data[st.lineStart:st.lineEnd], line)
		return
	}
	if r.need != nil && len(line) <= maxLineScan && !needsMet(st.lowerLine(), r.need) {
		done[r.idx/64] |= 1 << (r.idx % 64)
		return
	}
	masked := false
	if (r.id == "path_traversal" || r.id == "path_traversal_deep") && st.ext == ".md" && !st.inFence() {
		masked = true
	}
	if len(line) > maxLineScan {
		// A long line: evaluate a window around this literal, once per window.
		if start < st.fsc.winEnd[r.idx] && st.fsc.winEnd[r.idx] > st.lineStart {
			return
		}
		ws, we := max(st.lineStart, start-lineBack), min(st.lineEnd, end+lineWindow)
		st.fsc.winEnd[r.idx] = we
		line = st.data[ws:we]
		if masked {
			line = maskLinkDestinations(line)
		}
		if !r.match(line) {
			return
		}
	} else {
		done[r.idx/64] |= 1 << (r.idx % 64)
		if masked {
			line = maskLinkDestinations(line)
		}
		if !r.match(line) {
			return
		}
	}
	done[r.idx/64] |= 1 << (r.idx % 64)
	st.emit(r, st.data[st.lineStart:st.lineEnd], line)
}

// emit records r's finding on the current line (full) with the text it matched in.
func (st *fileState) emit(r *rule, full, line []byte) {
	f := Finding{PatternID: r.id, Severity: r.sev, Category: r.cat, File: st.rel, Line: st.lineNo,
		Match: cutMatch(line), Description: r.desc}
	// The context checks read the line; a long one only around the match, so they
	// cost what the window cost.
	ctxLine := full
	if len(full) > maxLineScan {
		ctxLine = line
	}
	if st.adjust(&f, ctxLine) {
		st.out = append(st.out, f)
	}
}

// lowerLine is the current line with ASCII letters lower-cased (for need checks),
// made once per line in the worker's buffer.
func (st *fileState) lowerLine() []byte {
	if !st.lowerOK {
		line := st.data[st.lineStart:st.lineEnd]
		buf := st.fsc.lower[:0]
		for _, c := range line {
			buf = append(buf, fold[c])
		}
		st.fsc.lower = buf
		st.lowerOK = true
	}
	return st.fsc.lower
}

// cutMatch is upstream's `line.strip()` cut to 120 characters (117 + "..."), made
// valid UTF-8 so the JSON report stays well-formed.
func cutMatch(line []byte) string {
	line = bytes.TrimLeft(line, " \t\r\n\v\f")
	if len(line) > 1024 {
		line = line[:1024]
	}
	line = bytes.TrimRight(line, " \t\r\n\v\f")
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if utf8.RuneCountInString(s) <= 120 {
		return s
	}
	n := 0
	for i := range s {
		if n == 117 {
			return s[:i] + "..."
		}
		n++
	}
	return s
}
