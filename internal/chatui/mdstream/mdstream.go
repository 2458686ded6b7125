// Package mdstream renders a model's markdown answer for the terminal as it
// streams. The text is cut into top-level blocks (paragraphs, headings, list
// items, tables, quotes, code fences); a block is rendered with glamour once,
// when it is complete, and its lines are final from then on. Only the open
// last block is rendered again per delta, and the lines of an open code fence
// become final one by one as they complete, so the work per delta depends on
// the open block alone: not on the transcript, nor on how long the answer is.
//
// Input is raw text from the model. It is sanitised with termsafe before any
// styling: the only escape sequences in the output are mdstream's own SGR
// colours, and with Options.Color false there are none at all.
//
// A resize re-renders with Render (a finished message), or, for the answer
// still streaming, by writing the text so far to a New Stream at the new
// width: the result is the same as if it had streamed at that width.
package mdstream

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Options say how output is drawn.
type Options struct {
	Width int  // columns; 0 means 80
	Color bool // false: no ANSI at all (NO_COLOR, not a terminal)
}

// minWidth keeps a tiny terminal from making every word a line of its own.
const minWidth = 20

func (o Options) width() int {
	if o.Width <= 0 {
		return 80
	}
	return max(o.Width, minWidth)
}

// kind is what the open block is.
type kind uint8

const (
	kNone kind = iota
	kPara
	kQuote
	kTable
	kItem
)

// Stream renders one streamed answer. It is not safe for concurrent use.
type Stream struct {
	o     Options
	r     *renderer
	san   *termsafe.Writer
	clean bytes.Buffer // sanitised text not yet cut into lines
	out   []string     // final lines produced by the current Write

	// The open block.
	kind  kind
	block []string // its source lines (tabs expanded), blank lines included
	item  item     // kItem: the marker of the item being built
	code  *highlighter
	fence fence // when code != nil

	// What came before, for the spacing and numbering of the next block.
	blocks   int  // blocks started so far
	lastItem item // the last finished block was an item of this list...
	inList   bool // ...if this is set
	loose    bool // a blank line came after that item
	nextNum  int  // the number the next item of that ordered list shows

	tail      string
	tailValid bool
}

// New returns a Stream that renders with o.
func New(o Options) *Stream {
	s := &Stream{o: o}
	s.o.Width = o.width()
	s.r = rendererFor(s.o.Width, o.Color)
	s.san = termsafe.NewWriter(&s.clean)
	return s
}

// Write appends a raw delta of the model's text and returns the lines that
// became final with it: rendered once, never changed again.
func (s *Stream) Write(delta string) []string {
	if delta == "" {
		return nil
	}
	s.tailValid = false
	_, _ = s.san.WriteString(delta) // a bytes.Buffer does not fail
	s.out = nil
	s.cutLines()
	return s.take()
}

// Close ends the stream: what is open is finalised and returned.
func (s *Stream) Close() []string {
	s.tailValid = false
	_ = s.san.Flush()
	s.out = nil
	s.cutLines()
	if s.clean.Len() > 0 {
		l := s.clean.String()
		s.clean.Reset()
		s.line(l)
	}
	s.finish()
	s.code = nil
	return s.take()
}

func (s *Stream) take() []string {
	out := s.out
	s.out = nil
	return out
}

// cutLines feeds every complete line of the sanitised text to line.
func (s *Stream) cutLines() {
	b := s.clean.Bytes()
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		s.line(string(b[:i]))
		b = b[i+1:]
	}
	rest := string(b)
	s.clean.Reset()
	s.clean.WriteString(rest)
}

// Tail is the rendering of the unfinished last block ("" when there is
// none): its cost is bounded by that block.
func (s *Stream) Tail() string {
	if s.tailValid {
		return s.tail
	}
	s.tailValid = true
	s.tail = ""
	partial := expandTabs(strings.TrimSuffix(s.clean.String(), "\r"))
	if s.code != nil {
		if partial != "" {
			s.tail = strings.Join(s.code.lines(s.fence.content(partial)), "\n")
		}
		return s.tail
	}
	src := s.block
	if partial != "" {
		src = append(src[:len(src):len(src)], partial)
	}
	if isBlank(strings.Join(src, "")) {
		return ""
	}
	k := s.kind
	if k == kNone {
		k = kPara
		if it, ok := listItem(partial); ok {
			k, s.item = kItem, it
		}
	}
	lines := s.renderBlock(k, src)
	if len(lines) == 0 {
		return ""
	}
	if sep := s.sepBefore(k); sep {
		lines = append([]string{""}, lines...)
	}
	s.tail = strings.Join(lines, "\n")
	return s.tail
}

// line handles one complete line of sanitised text.
func (s *Stream) line(l string) {
	l = expandTabs(strings.TrimSuffix(l, "\r"))
	if s.code != nil {
		if s.fence.closes(l) {
			s.code = nil
			s.inList = false
			return
		}
		s.out = append(s.out, s.code.lines(s.fence.content(l))...)
		return
	}
	blank := isBlank(l)
	switch s.kind {
	case kPara, kQuote, kTable:
		if blank {
			s.finish()
			return
		}
		if s.kind == kPara && isSetext(l) {
			s.block = append(s.block, l)
			s.finish()
			return
		}
		if s.kind == kPara && len(s.block) == 1 && strings.Contains(s.block[0], "|") && isDelimRow(l) {
			s.kind = kTable
			s.block = append(s.block, l)
			return
		}
		if s.interrupts(l) {
			s.finish()
			break
		}
		s.block = append(s.block, l)
		return
	case kItem:
		if blank {
			s.block = append(s.block, l)
			return
		}
		if indentOf(l) >= s.item.content {
			s.block = append(s.block, l)
			return
		}
		afterBlank := isBlank(s.block[len(s.block)-1])
		if _, ok := listItem(l); !ok && !afterBlank && !s.interrupts(l) {
			s.block = append(s.block, l) // lazy continuation of the item's paragraph
			return
		}
		s.finish()
	}
	if blank {
		if s.inList {
			s.loose = true
		}
		return
	}
	s.start(l)
}

// interrupts reports whether l starts a new block even without a blank line
// before it (a quote's lazy continuation aside).
func (s *Stream) interrupts(l string) bool {
	if isHeading(l) || isBreak(l) {
		return true
	}
	if _, ok := openFence(l); ok {
		return true
	}
	if isQuote(l) {
		return s.kind != kQuote
	}
	it, ok := listItem(l)
	return ok && it.indent <= 3
}

// start begins a block with its first line l (not blank).
func (s *Stream) start(l string) {
	switch {
	case isHeading(l) || isBreak(l):
		s.emit(kPara, []string{l})
		s.inList = false
		return
	}
	if f, ok := openFence(l); ok {
		if s.sepBefore(kPara) {
			s.out = append(s.out, "")
		}
		s.blocks++
		s.inList = false
		s.fence = f
		s.code = newHighlighter(f.lang, s.o.Width, s.o.Color)
		return
	}
	s.block = []string{l}
	switch {
	case isQuote(l):
		s.kind = kQuote
	default:
		s.kind = kPara
		if it, ok := listItem(l); ok {
			s.kind, s.item = kItem, it
		}
	}
}

// finish renders the open block and makes its lines final.
func (s *Stream) finish() {
	if s.kind == kNone {
		return
	}
	k, block := s.kind, s.block
	trailingBlank := false
	for len(block) > 0 && isBlank(block[len(block)-1]) {
		block = block[:len(block)-1]
		trailingBlank = true
	}
	s.kind, s.block = kNone, nil
	if len(block) == 0 {
		return
	}
	s.emit(k, block)
	if k == kItem {
		s.loose = trailingBlank
	}
}

// emit renders a complete block and appends its lines to the output.
func (s *Stream) emit(k kind, block []string) {
	lines := s.renderBlock(k, block)
	if s.sepBefore(k) {
		s.out = append(s.out, "")
	}
	s.out = append(s.out, lines...)
	s.blocks++
	if k == kItem {
		if !s.inList || !s.lastItem.sameList(s.item) {
			s.nextNum = s.item.num
		}
		s.nextNum++
		s.lastItem, s.inList, s.loose = s.item, true, false
	} else {
		s.inList = false
	}
}

// sepBefore reports whether a blank line goes before a block of kind k:
// between all blocks but the items of one tight list.
func (s *Stream) sepBefore(k kind) bool {
	if s.blocks == 0 {
		return false
	}
	return k != kItem || !s.inList || s.loose || !s.lastItem.sameList(s.item)
}

// renderBlock renders block (kind k) with glamour. An item of an ordered list
// is renumbered first: each item is rendered on its own, and markdown lets
// every item say "1.".
func (s *Stream) renderBlock(k kind, block []string) []string {
	if k == kItem && s.item.ordered {
		n := s.item.num
		if s.inList && s.lastItem.sameList(s.item) {
			n = s.nextNum
		}
		first := block[0]
		renum := first[:s.item.indent] + strconv.Itoa(n) + first[s.item.numEnd:]
		block = append([]string{renum}, block[1:]...)
	}
	if k == kQuote {
		return s.renderQuote(block)
	}
	if k != kItem {
		return s.r.render(strings.Join(block, "\n")+"\n", s.o.Color)
	}
	// glamour runs the paragraphs of a loose item together ("amore" for
	// "- a\n\n  more"), so only the item's first part goes to it as a list;
	// what follows the first blank line or fence is rendered on its own, as
	// the item's content, and indented under it (a fence there is then
	// highlighted as top-level ones are).
	head, rest := block, []string(nil)
	for i, l := range block[1:] {
		if isBlank(l) {
			head, rest = block[:i+1], block[i+2:]
			break
		}
		if _, ok := openFence(l[min(indentOf(l), s.item.content):]); ok && indentOf(l) >= s.item.content {
			head, rest = block[:i+1], block[i+1:]
			break
		}
	}
	lines := s.r.render(strings.Join(head, "\n")+"\n", s.o.Color)
	if len(rest) == 0 {
		return lines
	}
	off := s.item.content - s.item.indent
	var src strings.Builder
	for _, l := range rest {
		src.WriteString(l[min(indentOf(l), s.item.content):])
		src.WriteByte('\n')
	}
	sub := New(Options{Width: s.o.Width - off, Color: s.o.Color})
	body := append(sub.Write(src.String()), sub.Close()...)
	lines = append(lines, "")
	pad := strings.Repeat(" ", off)
	for _, l := range body {
		if l != "" {
			l = pad + l
		}
		lines = append(lines, l)
	}
	return lines
}

// renderQuote renders a block quote: its content (markers removed) as a
// document of its own, a bar before each line. glamour's own quotes lose
// the bar on lines it wraps.
func (s *Stream) renderQuote(block []string) []string {
	var src strings.Builder
	for _, l := range block {
		if isQuote(l) {
			l = strings.TrimLeft(l, " ")[1:]
			l = strings.TrimPrefix(l, " ")
		}
		src.WriteString(l)
		src.WriteByte('\n')
	}
	sub := New(Options{Width: s.o.Width - 2, Color: s.o.Color})
	body := append(sub.Write(src.String()), sub.Close()...)
	bar := "> "
	if s.o.Color {
		bar = "\x1b[38;5;244m│\x1b[m "
	}
	for i, l := range body {
		body[i] = strings.TrimRight("  "+bar+strings.TrimPrefix(l, "  "), " ")
	}
	return body
}

// Render renders a whole message: what a Stream given md in one Write and
// then closed produces, as one string.
func Render(md string, o Options) string {
	s := New(o)
	lines := s.Write(md)
	lines = append(lines, s.Close()...)
	return strings.Join(lines, "\n")
}
