// Package termsafe makes text that comes from outside hermes (the model,
// plugins, manifests, the catalog and the index, links, stored sessions) safe
// to print on a terminal. Everything that could make the terminal do something
// other than show characters is written out visibly instead, in the notation
// bash's $'...' and printf read back:
//
//   - C0 controls and DEL: \r, \n and \t by name, the rest as \x1b, \x07, \x7f;
//     so ESC, and with it every CSI, OSC, DCS and APC sequence, shows as text
//   - C1 controls (U+0080–U+009F, which some terminals obey as 8-bit CSI/OSC):
//     \u009b
//   - bidirectional controls (U+202A–U+202E, U+2066–U+2069, LRM, RLM, ALM),
//     which reorder what is shown, and the line/paragraph separators: \u202e
//   - bytes that are not UTF-8: \xff
//
// Valid UTF-8 otherwise passes unchanged (no copy when nothing needs escaping).
// A literal backslash is not doubled: the notation is for the eye, and what
// could hide text is gone either way. hermes applies its own styling after
// sanitising, so its colours are the only ones a sanitised string carries.
package termsafe

import (
	"io"
	"unicode/utf8"
)

// mode says which layout characters pass.
type mode uint8

const (
	modeLine   mode = iota // one line: newline and tab escaped too
	modeText               // several lines: newline, tab and CRLF pass
	modeColour             // a plugin's output line: tab and SGR colour pass
	modeJSON               // JSON text: only what JSON may carry raw but a terminal obeys
)

// Line is s for a one-line field (a name, a version, a table cell, a URL): every
// control character, newline and tab included, is escaped, so s cannot start a
// line that looks like hermes' own.
func Line(s string) string { return clean(s, modeLine) }

// Text is s for a block of several lines (a reply, a description, a message):
// newlines, tabs and CRLF line ends pass, everything else is escaped as Line does.
func Text(s string) string { return clean(s, modeText) }

// Colour is s for one line of a plugin's own output: as Line, but tabs and SGR
// colour sequences (ESC [ digits ; : m) pass, and a line that used one ends with
// a reset so the colour cannot reach the next line. Colour cannot move the
// cursor, erase or retitle; it can only paint the plugin's own line.
func Colour(s string) string { return clean(s, modeColour) }

// JSON is JSON text b safe to print: the characters a JSON encoder may leave raw
// inside strings but a terminal obeys (DEL, C1 and bidirectional controls, the
// line separators) become \u escapes, which decode to the same string. Any
// encoder's C0 escaping is already done; b is returned as is when clean.
func JSON(b []byte) []byte {
	s := string(b)
	if firstUnsafe(s, modeJSON) < 0 {
		return b
	}
	return appendClean(nil, s, modeJSON)
}

func clean(s string, m mode) string {
	i := firstUnsafe(s, m)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendClean(b, s[i:], m))
}

// firstUnsafe is the index of the first byte of s that mode m escapes, or -1.
func firstUnsafe(s string, m mode) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			// A colour sequence passes but needs the reset appendClean adds.
			if c == 0x1b || !passesASCII(s, i, m) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || escapedRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// passesASCII reports whether the control byte s[i] passes in mode m.
func passesASCII(s string, i int, m mode) bool {
	switch c := s[i]; {
	case m == modeJSON:
		return c != 0x7f // JSON escapes C0 itself; raw \n and \t are its whitespace
	case c == '\t':
		return m != modeLine
	case c == '\n':
		return m == modeText
	case c == '\r':
		return m == modeText && i+1 < len(s) && s[i+1] == '\n'
	case c == 0x1b:
		return m == modeColour && sgrLen(s[i:]) > 0
	}
	return false
}

// escapedRune reports whether a valid non-ASCII rune is escaped in every mode.
func escapedRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendClean appends s to b with what mode m does not pass escaped.
func appendClean(b []byte, s string, m mode) []byte {
	coloured := false
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == 0x1b && m == modeColour && sgrLen(s[i:]) > 0:
				n := sgrLen(s[i:])
				b = append(b, s[i:i+n]...)
				i += n
				coloured = true
				continue
			case passesASCII(s, i, m):
				b = append(b, c)
			case m == modeJSON:
				b = appendU(b, rune(c))
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == '\r':
				b = append(b, `\r`...)
			default:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case escapedRune(r):
			b = appendU(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	if coloured {
		b = append(b, "\x1b[0m"...)
	}
	return b
}

// appendU appends \uXXXX (every escaped rune is in the BMP).
func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// sgrLen is the length of the SGR colour sequence s starts with (ESC [, then
// digits, ';' and ':', then m), or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 64; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || c == ':' || (c >= '0' && c <= '9'):
		default:
			return 0
		}
	}
	return 0
}

// Writer is Text for a stream that arrives in pieces (a streamed model reply):
// what it writes is what Text of everything written so far gives, however the
// pieces were cut. A character split between two writes (a UTF-8 sequence, the
// CR of a CRLF) is held back until the next write completes it, or Flush.
type Writer struct {
	w    io.Writer
	m    mode
	held []byte // the incomplete end of the last write
	buf  []byte
}

// NewWriter returns a Writer that writes Text of what it is given to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, m: modeText} }

// NewJSONWriter returns a Writer that writes JSON of what it is given to w.
func NewJSONWriter(w io.Writer) *Writer { return &Writer{w: w, m: modeJSON} }

// Write writes the sanitised p, less an incomplete character at its end. It
// reports len(p) unless w failed.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
	}
	keep := incompleteTail(data, w.m)
	s := string(data[:len(data)-keep])
	w.held = append([]byte(nil), data[len(data)-keep:]...)
	if s == "" {
		return len(p), nil
	}
	w.buf = appendClean(w.buf[:0], s, w.m)
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes what was held back, escaped: the stream ended in the middle of
// a character.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	out := appendClean(nil, string(w.held), w.m)
	w.held = w.held[:0]
	_, err := w.w.Write(out)
	return err
}

// incompleteTail is how many bytes at the end of b may still become another
// character with the next write: a CR that a LF may follow (text mode), or the
// start of a UTF-8 sequence.
func incompleteTail(b []byte, m mode) int {
	n := len(b)
	if n == 0 {
		return 0
	}
	if b[n-1] == '\r' && m == modeText {
		return 1
	}
	for k := 1; k <= utf8.UTFMax-1 && k <= n; k++ {
		c := b[n-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[n-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
