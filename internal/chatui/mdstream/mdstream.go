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

	"github.com/charmbracelet/x/ansi"

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

	// tight: a blank line goes between blocks only where the source had
	// one (the content of a list item). lastBlank: the last line was blank;
	// blankBefore: the open block came after a blank line.
	tight, lastBlank, blankBefore bool

	depth int // how many items and quotes this stream's text is inside

	// contNext: the last block was a paragraph cut short (para.go), so a
	// paragraph after it is its rest; forcePara: the text that follows is
	// the rest of that paragraph's line, whatever it looks like.
	contNext, forcePara bool

	tail      string
	tailValid bool
}

// maxDepth bounds the nesting rendered as sub-documents: deeper than this
// (a model answering "- - - - …") glamour draws the block by itself, so a
// line of markers cannot make a Stream per marker.
const maxDepth = 8

// flat is block as wrapped text, its markup shown as written: what is left
// of a block nested deeper than maxDepth. glamour is not given it, since it
// slows down steeply with depth once the indentation nears the width.
func flat(block []string, width int) []string {
	text := strings.Join(strings.Fields(strings.Join(block, " ")), " ")
	lines := strings.Split(ansi.Wrap(text, max(width-4, 8), ""), "\n")
	for i, l := range lines {
		lines[i] = "  " + strings.TrimRight(l, " ")
	}
	return lines
}

// sub is a Stream for the content of an item or quote, width columns wide.
func (s *Stream) sub(width int) *Stream {
	n := New(Options{Width: width, Color: s.o.Color})
	n.depth = s.depth + 1
	return n
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
	rest := s.cutPartial(string(b))
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
	partial := strings.TrimSuffix(s.clean.String(), "\r")
	if s.code != nil {
		partial = expandTabs(partial)
		// A line of fence characters may be the closing fence: shown as
		// code it would flash for a delta and go.
		if t := strings.TrimSpace(partial); partial != "" && (t == "" || strings.Trim(t, string(s.fence.char)) != "" || indentOf(partial) > 3) {
			s.tail = strings.Join(s.code.lines(s.fence.content(partial)), "\n")
		}
		return s.tail
	}
	partial = textTabs(partial)
	var lines []string
	if s.forcePara {
		// the rest of a cut paragraph's line
		if partial = strings.TrimLeft(partial, " "); partial != "" {
			lines = s.tailBlock(kPara, item{}, s.sepBefore(kPara, item{}, false), []string{partial})
		}
	} else if partial != "" && s.kind != kNone && s.startsNew(partial) {
		// The partial line will start a block of its own: show it so now,
		// not as a part of the open block for a delta.
		lines = s.tailBlock(s.kind, s.item, s.sepBefore(s.kind, s.item, s.blankBefore), s.block)
		k, it := kindOf(partial)
		sep := !s.tight || s.lastBlank
		if k == kItem && s.kind == kItem && s.item.sameList(it) {
			sep = s.lastBlank
			it.num = s.numberFor(s.item) + 1
			it.renumbered = true
		}
		lines = append(lines, s.tailBlock(k, it, sep, []string{partial})...)
	} else {
		src := s.block
		if partial != "" {
			src = append(src[:len(src):len(src)], partial)
		}
		k, it, blankBefore := s.kind, s.item, s.blankBefore
		if k == kNone {
			k, it = kindOf(partial)
			blankBefore = s.lastBlank
		}
		lines = s.tailBlock(k, it, s.sepBefore(k, it, blankBefore), src)
	}
	s.tail = strings.Join(lines, "\n")
	return s.tail
}

// kindOf is the kind of block line l starts (not a fence, a heading or a
// break: those are final as soon as their line is).
func kindOf(l string) (kind, item) {
	if isQuote(l) {
		return kQuote, item{}
	}
	if it, ok := listItem(l); ok {
		return kItem, it
	}
	return kPara, item{}
}

// tailBlock renders src as a block of the tail, a blank line before it if sep.
func (s *Stream) tailBlock(k kind, it item, sep bool, src []string) []string {
	if isBlank(strings.Join(src, "")) {
		return nil
	}
	lines := s.renderBlock(k, it, src)
	if sep && len(lines) > 0 {
		lines = append([]string{""}, lines...)
	}
	return lines
}

// startsNew reports whether line l, once complete, ends the open block and
// starts another (as line decides).
func (s *Stream) startsNew(l string) bool {
	switch s.kind {
	case kPara, kQuote, kTable:
		return !isBlank(l) && s.interrupts(l) && !(s.kind == kPara && isSetext(l))
	case kItem:
		if isBlank(l) || indentOf(l) >= s.item.content {
			return false
		}
		_, isItem := listItem(l)
		return isItem || isBlank(s.block[len(s.block)-1]) || s.interrupts(l)
	}
	return false
}

// line handles one complete line of sanitised text.
func (s *Stream) line(l string) {
	l = strings.TrimSuffix(l, "\r")
	if s.code != nil {
		l = expandTabs(l)
		if s.fence.closes(l) {
			s.code = nil
			s.inList = false
			return
		}
		s.out = append(s.out, s.code.lines(s.fence.content(l))...)
		return
	}
	l = textTabs(l)
	blank := isBlank(l)
	if s.forcePara {
		// the rest of a line whose paragraph was cut (para.go)
		s.forcePara = false
		if l = strings.TrimLeft(l, " "); l != "" {
			s.lastBlank = false
			s.addPara(l)
			return
		}
	}
	prevBlank := s.lastBlank
	s.lastBlank = blank
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
		if s.kind == kPara {
			s.addPara(l)
			return
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
	s.blankBefore = prevBlank
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
	if _, isFence := openFence(l); isFence || isHeading(l) || isBreak(l) {
		s.contNext = false // not the rest of a cut paragraph
	}
	switch {
	case isHeading(l) || isBreak(l):
		s.emit(kPara, []string{l})
		s.inList = false
		return
	}
	if f, ok := openFence(l); ok {
		if s.sepBefore(kPara, item{}, s.blankBefore) {
			s.out = append(s.out, "")
		}
		s.blocks++
		s.inList = false
		s.fence = f
		s.code = newHighlighter(f.lang, s.o.Width, s.o.Color)
		return
	}
	if k, it := kindOf(l); k == kPara {
		s.addPara(l)
	} else {
		s.contNext = false
		s.kind, s.item, s.block = k, it, []string{l}
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
	lines := s.renderBlock(k, s.item, block)
	if s.sepBefore(k, s.item, s.blankBefore) {
		s.out = append(s.out, "")
	}
	s.out = append(s.out, lines...)
	s.blocks++
	s.contNext = false
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

// sepBefore reports whether a blank line goes before a block of kind k
// (item it, after a blank line or not): between all blocks but the items of
// one tight list, and in tight content only where the source had one.
func (s *Stream) sepBefore(k kind, it item, blankBefore bool) bool {
	if s.blocks == 0 || (k == kPara && s.contNext) || (s.tight && !blankBefore) {
		return false
	}
	return k != kItem || !s.inList || s.loose || !s.lastItem.sameList(it)
}

// numberFor is the number item it shows: its own, or the next of the list
// it continues.
func (s *Stream) numberFor(it item) int {
	if it.renumbered || !s.inList || !s.lastItem.sameList(it) {
		return it.num
	}
	return s.nextNum
}

// renderBlock renders block (kind k): with glamour, but for the list items
// and quotes, whose content is rendered as a document of its own.
func (s *Stream) renderBlock(k kind, it item, block []string) []string {
	if s.depth >= maxDepth {
		return flat(block, s.o.Width)
	}
	switch k {
	case kQuote:
		return s.renderQuote(block)
	case kItem:
		return s.renderItem(it, block)
	}
	src := strings.Join(block, "\n") + "\n"
	if indentOf(block[0]) < 4 { // not indented code, which is literal
		src = escapeAngles(src)
	}
	return s.r.render(src, s.o.Color)
}

// renderItem renders one list item: its marker, then its content (the
// lines with the item's indentation removed) rendered at the width that is
// left and hung under the marker. glamour renders items too, but runs the
// paragraphs of a loose item together ("amore" for "- a\n\n  more") and
// wraps a long item back to the margin. An ordered item is numbered from
// the list's first: each item is rendered on its own, and markdown lets
// every item say "1.".
func (s *Stream) renderItem(it item, block []string) []string {
	marker := "• "
	if it.ordered {
		marker = strconv.Itoa(s.numberFor(it)) + string(it.delim) + " "
	}
	var src strings.Builder
	for i, l := range block {
		if i == 0 {
			l = l[min(len(l), it.content):]
		} else {
			l = l[min(indentOf(l), it.content):]
		}
		src.WriteString(l)
		src.WriteByte('\n')
	}
	w := ansi.StringWidth(marker)
	sub := s.sub(s.o.Width - w)
	sub.tight = true
	body := append(sub.Write(src.String()), sub.Close()...)
	if len(body) == 0 {
		body = []string{""}
	}
	pad := strings.Repeat(" ", w)
	for i, l := range body {
		l = strings.TrimPrefix(l, "  ")
		switch {
		case i == 0:
			l = "  " + marker + l
		case l != "":
			l = "  " + pad + l
		}
		body[i] = strings.TrimRight(l, " ")
	}
	return body
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
	sub := s.sub(s.o.Width - 2)
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
