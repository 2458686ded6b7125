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
	// Trie.
	type node struct {
		next []int32
		fail int
		out  []int
	}
	newNode := func() node {
		nx := make([]int32, n)
		for i := range nx {
			nx[i] = -1
		}
		return node{next: nx}
	}
	nodes := []node{newNode()}
	for id, l := range lits {
		m.lens[id] = len(l)
		s := 0
		for i := 0; i < len(l); i++ {
			c := m.class[l[i]]
			if nodes[s].next[c] < 0 {
				nodes = append(nodes, newNode())
				nodes[s].next[c] = int32(len(nodes) - 1)
			}
			s = int(nodes[s].next[c])
		}
		nodes[s].out = append(nodes[s].out, id)
	}
	// Failure links, breadth first, turning the trie into a full DFA.
	queue := []int{}
	for c := 0; c < n; c++ {
		if t := nodes[0].next[c]; t < 0 {
			nodes[0].next[c] = 0
		} else {
			nodes[t].fail = 0
			queue = append(queue, int(t))
		}
	}
	nodes[0].next[0] = 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].out = append(nodes[s].out, nodes[f].out...)
		for c := 0; c < n; c++ {
			t := nodes[s].next[c]
			if t < 0 || c == 0 {
				nodes[s].next[c] = nodes[f].next[c]
				continue
			}
			nodes[t].fail = int(nodes[f].next[c])
			queue = append(queue, int(t))
		}
	}
	// Renumber: states without output first, so "has output" is one comparison.
	order := make([]int, 0, len(nodes))
	for i := range nodes {
		if len(nodes[i].out) == 0 {
			order = append(order, i)
		}
	}
	m.fstate = len(order)
	for i := range nodes {
		if len(nodes[i].out) > 0 {
			order = append(order, i)
		}
	}
	newID := make([]int, len(nodes))
	for ni, old := range order {
		newID[old] = ni
	}
	m.trans = make([]uint32, len(nodes)*n)
	m.out = make([][]int, len(nodes)-m.fstate)
	for ni, old := range order {
		for c := 0; c < n; c++ {
			m.trans[ni*n+c] = uint32(newID[nodes[old].next[c]] * n)
		}
		if ni >= m.fstate {
			m.out[ni-m.fstate] = nodes[old].out
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
