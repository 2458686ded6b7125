package catalog

import (
	"bytes"
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

// Search ranks entries for term in upstream's order: exact name, name substring,
// exact tag, tag substring, description, author, close spelling of the name. The
// capability filter is an exact, case-insensitive label match. An empty term lists
// everything (after the filter) by name. Ties sort by name, curated entries first.
func Search(entries []Entry, term, capability string) []Result {
	term = strings.ToLower(strings.TrimSpace(term))
	capability = strings.ToLower(strings.TrimSpace(capability))
	t := []byte(term)
	var buf []byte
	// lowerHas reports whether s, lower-cased, contains t; one reused buffer keeps a
	// 10,000-entry search from allocating per field.
	lowerHas := func(s string) bool {
		if len(s) < len(t) {
			return false
		}
		buf = appendLower(buf[:0], s)
		return bytes.Contains(buf, t)
	}
	lowerEq := func(s string) bool { return len(s) == len(t) && strings.EqualFold(s, term) }
	var out []Result
	for i := range entries {
		e := &entries[i]
		if capability != "" && !hasLabel(e, capability) {
			continue
		}
		if term == "" {
			out = append(out, Result{Entry: e})
			continue
		}
		var score float64
		switch {
		case lowerEq(e.Name):
			score = scoreExactName
		case lowerHas(e.Name):
			score = scoreInName
		case anyTag(e, lowerEq):
			score = scoreExactTag
		case anyTag(e, lowerHas):
			score = scoreInTag
		case lowerHas(e.Description):
			score = scoreInDesc
		case lowerHas(e.Author):
			score = scoreInAuthor
		default:
			buf = appendLower(buf[:0], e.Name)
			if r := similarity(buf, t); r >= minSimilarity {
				score = r * scoreSpelling
			}
		}
		if score > 0 {
			out = append(out, Result{Entry: e, Score: score})
		}
	}
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
	return out
}

// anyTag applies f to the entry's tags; a curated entry's category and declared
// tool names count as tags (upstream's catalog search covers declared tools).
func anyTag(e *Entry, f func(string) bool) bool {
	for _, s := range e.Tags {
		if f(s) {
			return true
		}
	}
	if e.Origin == OriginCatalog {
		if e.Category != "" && f(e.Category) {
			return true
		}
		for _, s := range e.Tools {
			if f(s) {
				return true
			}
		}
	}
	return false
}

func hasLabel(e *Entry, c string) bool {
	for _, l := range e.Capabilities() {
		if strings.EqualFold(l, c) {
			return true
		}
	}
	return false
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
func similarity(a, b []byte) float64 {
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
