package catalog

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Scores of upstream's ranking (search_index), highest first.
const (
	scoreExactName = 100
	scoreInName    = 80
	scoreExactTag  = 70
	scoreInTag     = 55
	scoreInDesc    = 50
	scoreInAuthor  = 40
	// Close spelling scores similarity × scoreSpelling when similarity ≥ minSimilarity.
	scoreSpelling = 60
	minSimilarity = 0.6
)

// Result is one search hit.
type Result struct {
	Entry *Entry
	Score float64
}

// Search ranks the catalog for term in upstream's order: exact name, name
// substring, exact tag, tag substring, description, author, close spelling of the
// name. The capability filter is an exact, case-insensitive label match. An empty
// term lists everything (after the filter) by name. Ties sort by name, curated
// entries first.
func (c *Catalog) Search(term, capability string) []Result {
	t := lower(strings.TrimSpace(term))
	capL := lower(strings.TrimSpace(capability))
	var out []Result
	c.guarded(func() {
		out = nil
		for i := range c.entries {
			e := &c.entries[i]
			f := searchFields(e)
			if score, ok := scoreFields(&f, t, capL); ok {
				out = append(out, Result{Entry: e, Score: score})
			}
		}
		for _, l := range c.lazy {
			l.each(func(fl *fields, off, end int) bool {
				if score, ok := scoreFields(fl, t, capL); ok {
					if e, ok := l.entry(off, end); ok {
						out = append(out, Result{Entry: &e, Score: score})
					}
				}
				return true
			})
		}
	})
	sortResults(out)
	return out
}

// Search ranks entries (see Catalog.Search).
func Search(entries []Entry, term, capability string) []Result {
	return NewCatalog(entries, nil).Search(term, capability)
}

// scoreFields scores one entry's lower-cased fields for the lower-cased term t;
// ok is false when the entry does not match (or fails the capability filter).
func scoreFields(f *fields, t, capL string) (float64, bool) {
	if capL != "" && !hasItem(f.labels, capL) {
		return 0, false
	}
	if t == "" {
		return 0, true
	}
	var score float64
	switch {
	case f.name == t:
		score = scoreExactName
	case strings.Contains(f.name, t):
		score = scoreInName
	case hasItem(f.tags, t):
		score = scoreExactTag
	case strings.Contains(f.tags, t):
		score = scoreInTag
	case strings.Contains(f.desc, t):
		score = scoreInDesc
	case strings.Contains(f.author, t):
		score = scoreInAuthor
	default:
		if r := similarity(f.name, t); r >= minSimilarity {
			score = r * scoreSpelling
		}
	}
	return score, score > 0
}

// hasItem reports whether the NUL-joined list holds item exactly.
func hasItem(list, item string) bool {
	for list != "" {
		head, rest, _ := strings.Cut(list, sep)
		if head == item {
			return true
		}
		list = rest
	}
	return false
}

func sortResults(out []Result) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Entry.Name != b.Entry.Name {
			return a.Entry.Name < b.Entry.Name
		}
		return a.Entry.Origin == OriginCatalog && b.Entry.Origin != OriginCatalog
	})
}

// appendLower appends s lower-cased (ASCII fast path; other runes through
// unicode lower-casing).
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, toLowerRune(r))
		i += n
	}
	return dst
}

func toLowerRune(r rune) rune { return []rune(strings.ToLower(string(r)))[0] }

// similarity is 2·LCS/(|a|+|b|) over bytes: the share of both strings that a
// longest common subsequence covers. It stands in for Python's difflib ratio
// (2·matches/total), which it equals whenever difflib's matching blocks form a
// longest common subsequence, the usual case for short names.
func similarity(a, b string) float64 {
	la, lb := len(a), len(b)
	if la+lb == 0 {
		return 1
	}
	short := la
	if lb < short {
		short = lb
	}
	// The best possible ratio is when the shorter is a subsequence of the longer.
	if 2*float64(short)/float64(la+lb) < minSimilarity {
		return 0
	}
	var rowBuf [2][65]int
	var prev, cur []int
	if lb < 65 {
		prev, cur = rowBuf[0][:lb+1], rowBuf[1][:lb+1]
	} else {
		prev, cur = make([]int, lb+1), make([]int, lb+1)
	}
	for j := range prev {
		prev[j] = 0
	}
	for i := 1; i <= la; i++ {
		cur[0] = 0
		for j := 1; j <= lb; j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[lb]) / float64(la+lb)
}
