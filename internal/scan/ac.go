package scan

// A small Aho-Corasick automaton over ASCII-case-folded bytes. Every rule names the
// literals one of which must occur on a line for its regular expression to match; the
// automaton finds all of them in one pass over a file, so a regular expression only
// runs on the few lines (or windows of a long line) where its literal occurs. Go's
// regexp engine is far slower than a table walk, and most lines of most files match no
// literal at all.

// fold maps A-Z to a-z; every other byte maps to itself.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

type acMatcher struct {
	class  [256]uint8 // byte -> equivalence class (0: in no literal)
	ncls   int
	trans  []uint32 // state*ncls+class -> next state's row offset (state*ncls)
	first  uint32   // row offsets >= first carry output
	out    [][]int  // (offset/ncls - firstState) -> literal ids ending here (incl. via failure links)
	lens   []int    // literal id -> length
	fstate int
}

// newAC builds the automaton; literals are matched case-insensitively (ASCII).
func newAC(lits []string) *acMatcher {
	m := &acMatcher{lens: make([]int, len(lits))}
	// Equivalence classes: one per distinct folded byte used in any literal.
	var used [256]bool
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			used[fold[l[i]]] = true
		}
	}
	n := 1
	for b := 0; b < 256; b++ {
		if used[b] {
			m.class[b] = uint8(n)
			n++
		}
	}
	for b := 0; b < 256; b++ {
		m.class[b] = m.class[fold[b]]
	}
	m.ncls = n
	// Trie, as one flat table of child links (state*n+class, -1 for none).
	next := make([]int32, 0, 2048*n)
	var fail []int32
	var outs [][]int
	newNode := func() int {
		for c := 0; c < n; c++ {
			next = append(next, -1)
		}
		fail = append(fail, 0)
		outs = append(outs, nil)
		return len(fail) - 1
	}
	newNode()
	for id, l := range lits {
		m.lens[id] = len(l)
		s := 0
		for i := 0; i < len(l); i++ {
			c := int(m.class[l[i]])
			if next[s*n+c] < 0 {
				t := newNode()
				next[s*n+c] = int32(t)
			}
			s = int(next[s*n+c])
		}
		outs[s] = append(outs[s], id)
	}
	// Failure links, breadth first, turning the trie into a full DFA.
	queue := make([]int, 0, len(fail))
	for c := 0; c < n; c++ {
		if t := next[c]; t <= 0 {
			next[c] = 0
		} else {
			fail[t] = 0
			queue = append(queue, int(t))
		}
	}
	for qi := 0; qi < len(queue); qi++ {
		s := queue[qi]
		f := int(fail[s])
		if len(outs[f]) > 0 {
			outs[s] = append(outs[s][:len(outs[s]):len(outs[s])], outs[f]...)
		}
		for c := 0; c < n; c++ {
			t := next[s*n+c]
			if t < 0 || c == 0 {
				next[s*n+c] = next[f*n+c]
				continue
			}
			fail[t] = next[f*n+c]
			queue = append(queue, int(t))
		}
	}
	nstates := len(fail)
	// Renumber: states without output first, so "has output" is one comparison.
	order := make([]int, 0, nstates)
	for i := 0; i < nstates; i++ {
		if len(outs[i]) == 0 {
			order = append(order, i)
		}
	}
	m.fstate = len(order)
	for i := 0; i < nstates; i++ {
		if len(outs[i]) > 0 {
			order = append(order, i)
		}
	}
	newID := make([]int, nstates)
	for ni, old := range order {
		newID[old] = ni
	}
	m.trans = make([]uint32, nstates*n)
	m.out = make([][]int, nstates-m.fstate)
	for ni, old := range order {
		for c := 0; c < n; c++ {
			m.trans[ni*n+c] = uint32(newID[next[old*n+c]] * n)
		}
		if ni >= m.fstate {
			m.out[ni-m.fstate] = outs[old]
		}
	}
	m.first = uint32(m.fstate * n)
	return m
}

// hit is one literal occurrence: end is the offset just past its last byte.
type hit struct {
	end int
	lit int
}

// scan appends literal occurrences in buf[from:] to hits, in order of end offset,
// starting in automaton state st. It returns early once hits holds maxHits entries, so
// a hostile file cannot make the list grow without bound; the caller processes them
// and resumes from the returned offset and state.
func (m *acMatcher) scan(buf []byte, from int, st uint32, hits []hit, maxHits int) ([]hit, int, uint32) {
	trans, class, first := m.trans, &m.class, m.first
	s := st
	for i := from; i < len(buf); i++ {
		s = trans[s+uint32(class[buf[i]])]
		if s >= first {
			for _, id := range m.out[int(s)/m.ncls-m.fstate] {
				hits = append(hits, hit{end: i + 1, lit: id})
			}
			if len(hits) >= maxHits {
				return hits, i + 1, s
			}
		}
	}
	return hits, len(buf), s
}
