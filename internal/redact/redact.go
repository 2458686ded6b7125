// Package redact hides secrets in text hermes shows or keeps: API keys of the
// common providers, bearer tokens, private key blocks, .env-style assignments,
// plus the patterns plugins register (register_redaction_patterns).
//
// Every rule is joined into one regexp, run once over the text. Go's regexp is
// linear but slow on a megabyte with a hundred alternatives, so a literal
// prefilter runs first: every rule names the literals a match must contain
// (a plugin pattern's >= 2 leading literal characters are why upstream asks for
// them), and only the lines holding one are given to the regexp.
package redact

import (
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Redactor redacts with the built-in rules and a fixed set of plugin patterns.
// The zero value is not usable; a nil *Redactor redacts nothing. Safe for
// concurrent use; the regexp compiles on first use (not at every start-up).
type Redactor struct {
	rules []rule

	once     sync.Once
	re       *regexp.Regexp
	groupOf  []int // rule i's outer capture group
	secretOf []int // rule i's masked group (absolute), or its outer group
	plain    []anchor
	folded   []anchor
	hasFold  bool
}

type anchor struct {
	lit   string
	block bool
}

// New returns a Redactor over the built-in rules and patterns, which must each
// have passed Check (they are plugin patterns; one that does not compile here
// is skipped).
func New(patterns []string) *Redactor {
	rules := builtinRules()
	seen := map[string]bool{}
	for _, p := range patterns {
		if seen[p] {
			continue
		}
		seen[p] = true
		lit, fold, err := check(p)
		if err != nil {
			continue
		}
		rules = append(rules, rule{expr: p, anchors: []string{lit}, fold: fold, label: "plugin pattern"})
	}
	return &Redactor{rules: rules}
}

func (r *Redactor) compile() {
	var b strings.Builder
	group := 0
	r.groupOf = make([]int, len(r.rules))
	r.secretOf = make([]int, len(r.rules))
	for i, ru := range r.rules {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString("(" + ru.expr + ")")
		group++
		r.groupOf[i] = group
		r.secretOf[i] = group
		if ru.secret > 0 {
			r.secretOf[i] = group + ru.secret
		}
		group += regexp.MustCompile(ru.expr).NumSubexp()
		for _, a := range ru.anchors {
			if ru.fold {
				r.folded = append(r.folded, anchor{strings.ToLower(a), ru.block})
				r.hasFold = true
			} else {
				r.plain = append(r.plain, anchor{a, ru.block})
			}
		}
	}
	r.re = regexp.MustCompile(b.String())
}

// String returns s with every secret masked. A nil Redactor returns s.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.once.Do(r.compile)
	spans := r.candidates(s)
	if len(spans) == 0 {
		return s
	}
	var out strings.Builder
	last := 0
	for _, sp := range spans {
		seg := s[sp.start:sp.end]
		ms := r.re.FindAllStringSubmatchIndex(seg, -1)
		for _, m := range ms {
			i := r.ruleOf(m)
			if i < 0 {
				continue
			}
			g := r.secretOf[i]
			a, z := sp.start+m[2*g], sp.start+m[2*g+1]
			if a < last || a < 0 {
				continue
			}
			out.WriteString(s[last:a])
			if rep := r.rules[i].replace; rep != "" {
				out.WriteString(rep)
			} else {
				out.WriteString(maskToken(s[a:z]))
			}
			last = z
		}
	}
	if last == 0 {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

func (r *Redactor) ruleOf(m []int) int {
	for i, g := range r.groupOf {
		if m[2*g] >= 0 {
			return i
		}
	}
	return -1
}

type span struct{ start, end int }

// candidates returns the merged line ranges of s that hold an anchor; a block
// anchor's range runs to the end of the line of the block's end marker.
func (r *Redactor) candidates(s string) []span {
	var spans []span
	add := func(text string, as []anchor) {
		for _, a := range as {
			for off := 0; off < len(text); {
				i := strings.Index(text[off:], a.lit)
				if i < 0 {
					break
				}
				pos := off + i
				start := strings.LastIndexByte(s[:pos], '\n') + 1
				endFrom := pos
				if a.block {
					if j := strings.Index(s[pos:], "-----END"); j >= 0 {
						endFrom = pos + j
					}
				}
				end := len(s)
				if j := strings.IndexByte(s[endFrom:], '\n'); j >= 0 {
					end = endFrom + j
				}
				spans = append(spans, span{start, end})
				off = end // the rest of this line is in the span already
				if off <= pos {
					off = pos + 1
				}
			}
		}
	}
	add(s, r.plain)
	if r.hasFold {
		add(lowerASCII(s), r.folded)
	}
	if len(spans) < 2 {
		return spans
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		cur := &merged[len(merged)-1]
		if sp.start <= cur.end {
			if sp.end > cur.end {
				cur.end = sp.end
			}
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// lowerASCII lowers ASCII letters only, so byte offsets stay those of s.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Live is the redactor of a running command: the logs and the terminal hold it
// from start-up, and the plugins' patterns join once they have registered.
// Its zero value redacts with the built-in rules.
type Live struct {
	cur      atomic.Pointer[Redactor]
	disabled atomic.Bool
	base     sync.Once
}

// Set makes r the redactor in force.
func (l *Live) Set(r *Redactor) { l.cur.Store(r) }

// Disable turns redaction off (security.redact_secrets: false).
func (l *Live) Disable(off bool) { l.disabled.Store(off) }

// Enabled reports whether redaction is on.
func (l *Live) Enabled() bool { return l != nil && !l.disabled.Load() }

// String redacts s with the redactor in force. A nil Live returns s.
func (l *Live) String(s string) string {
	if l == nil || l.disabled.Load() {
		return s
	}
	r := l.cur.Load()
	if r == nil {
		l.base.Do(func() { l.cur.CompareAndSwap(nil, New(nil)) })
		r = l.cur.Load()
	}
	return r.String(s)
}

// Count is the number of rules (built-in and plugin), for `plugins show`-like
// reports and tests.
func (r *Redactor) Count() int { return len(r.rules) }
