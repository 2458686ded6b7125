package mdstream

import "strings"

// A paragraph is re-rendered whole while it is open, so one that went on
// for ever (a model that never starts a new paragraph) would cost more per
// delta the longer it got. Past chunkLimit bytes it is cut at the next
// sentence end (". ") or line end where no inline markup is open, and the
// part before is final: shown as a paragraph of its own, with no blank line
// after it, so the text reads on with a line break. The cut depends on the
// text only, never on how the deltas fell.
const chunkLimit = 1024

// addPara adds line l to the open paragraph, starting one if none is open.
func (s *Stream) addPara(l string) {
	if s.kind == kNone {
		s.kind, s.block = kPara, nil
	}
	for {
		c := cutPoint(s.block, l)
		if c < 0 {
			s.block = append(s.block, l)
			if paraLen(s.block) >= chunkLimit && balanced(s.block, "") {
				s.finishCont()
			}
			return
		}
		s.block = append(s.block, l[:c])
		s.finishCont()
		l = strings.TrimLeft(l[c:], " ")
		if l == "" {
			return
		}
		s.kind, s.block = kPara, nil
	}
}

// finishCont makes the open paragraph final as a part of a longer one.
func (s *Stream) finishCont() {
	s.finish()
	s.contNext = true
}

// cutPartial cuts the partial last line where addPara would cut it once
// complete, so a paragraph without line breaks is cut as it streams. It
// returns what remains partial.
func (s *Stream) cutPartial(partial string) string {
	if s.code != nil || partial == "" || strings.ContainsRune(partial, '\r') {
		return partial
	}
	l := textTabs(partial)
	switch {
	case s.forcePara:
		l = strings.TrimLeft(l, " ")
	case s.kind == kPara:
		if s.interrupts(l) || isSetext(l) || (len(s.block) == 1 && isDelimRow(l)) {
			return partial
		}
	case s.kind == kNone:
		if k, _ := kindOf(l); k != kPara || isHeading(l) || isBreak(l) || indentOf(l) >= 4 {
			return partial
		}
		if _, ok := openFence(l); ok {
			return partial
		}
	default:
		return partial
	}
	var block []string
	if s.kind == kPara {
		block = s.block
	}
	c := cutPoint(block, l)
	if c < 0 {
		return partial
	}
	forced := s.forcePara
	if s.kind == kNone && !forced {
		s.blankBefore = s.lastBlank
	}
	s.forcePara, s.lastBlank = false, false
	if s.kind == kNone && !forced {
		s.start(l[:c]) // a paragraph, as checked above; start spaces it
	} else {
		s.addPara(l[:c])
	}
	if s.kind == kPara { // not cut by addPara: the cut is at its end
		s.finishCont()
	}
	s.forcePara = true
	return strings.TrimLeft(l[c:], " ")
}

// cutPoint is where line l, added to paragraph block, is cut: just after
// the first ". " that is chunkLimit bytes or more into the paragraph with
// no inline markup open before it; -1 if there is none.
func cutPoint(block []string, l string) int {
	off := paraLen(block)
	if len(block) > 0 {
		off++
	}
	if off+len(l) < chunkLimit {
		return -1
	}
	for i := max(0, chunkLimit-off); i+1 < len(l); i++ {
		if l[i] == '.' && l[i+1] == ' ' && balanced(block, l[:i+1]) {
			return i + 1
		}
	}
	return -1
}

func paraLen(block []string) int {
	n := 0
	for i, l := range block {
		if i > 0 {
			n++
		}
		n += len(l)
	}
	return n
}

// balanced reports whether the paragraph block plus more has no code span,
// link or emphasis open: cutting there cannot split markup in two.
func balanced(block []string, more string) bool {
	var ticks, stars, brackets, parens int
	count := func(s string) {
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '`':
				ticks++
			case '*':
				stars++
			case '[':
				brackets++
			case ']':
				brackets--
			case '(':
				parens++
			case ')':
				parens--
			}
		}
	}
	for _, l := range block {
		count(l)
	}
	count(more)
	return ticks%2 == 0 && stars%2 == 0 && brackets == 0 && parens == 0
}
