package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"
)

// Marshal encodes v as encoding/json does, but leaves <, > and & as they are.
// The default escapes each as \u003c (six bytes for one), which nothing on the
// wire needs: a tool result full of HTML would grow sixfold on its way to a
// plugin, past the size cap. Everything sent on a connection is encoded so.
func Marshal(v any) ([]byte, error) {
	bp := encPool.Get().(*encBuf)
	defer encPool.Put(bp)
	bp.buf.Reset()
	if err := bp.enc.Encode(v); err != nil {
		return nil, err
	}
	b := bp.buf.Bytes()
	out := make([]byte, len(b)-1) // without Encode's newline
	copy(out, b)
	if bp.buf.Cap() > 64<<10 {
		bp.buf = bytes.Buffer{} // do not pin a big message's buffer in the pool
		bp.enc = newEncoder(&bp.buf)
	}
	return out, nil
}

type encBuf struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encPool = sync.Pool{New: func() any {
	e := &encBuf{}
	e.enc = newEncoder(&e.buf)
	return e
}}

func newEncoder(buf *bytes.Buffer) *json.Encoder {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc
}

// TooLargeError is a message that was not sent because, encoded, it is over the
// size cap the peer reads with: sending it would make the peer drop the whole
// connection, failing every call instead of this one.
type TooLargeError struct {
	What string // e.g. "tool.call request", "response to ctx.dispatch_tool"
	Size int    // bytes, with the line's newline
	Max  int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the protocol message size cap of %d bytes; it was not sent (make the data smaller)",
		e.What, e.Size, e.Max)
}

// Unwrap makes a TooLargeError match ErrMessageTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrMessageTooLarge }

// appendJSONString appends s as a JSON string, escaped as encoding/json does
// without HTML escaping: quote, backslash and control characters, invalid UTF-8
// as U+FFFD, and U+2028/U+2029 (which break JavaScript readers of the line).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
