// Package jsonx holds the JSON helpers hermes shares between its packages: an
// encoder that leaves HTML alone, and the number handling of decoded values.
package jsonx

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// Marshal encodes v as encoding/json does, but leaves <, > and & as they are.
// The default escapes each as \u003c (six bytes for one), which nothing on the
// wire needs: a tool result full of HTML would grow sixfold on its way to a
// plugin, past the size cap. Everything sent on a protocol connection is
// encoded so.
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

// AppendString appends s as a JSON string, escaped as Marshal escapes it:
// quote, backslash and control characters, invalid UTF-8 as U+FFFD, and
// U+2028/U+2029 (which break JavaScript readers of the line).
func AppendString(b []byte, s string) []byte {
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
