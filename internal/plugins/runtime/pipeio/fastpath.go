package pipeio

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// fastResponse decodes the common success response, {"jsonrpc":"2.0","id":N,
// "result":R}, without the general decoder (which the round trip of every tool call
// would pay); anything else returns nil and takes the general path.
func fastResponse(line []byte) *protocol.Message {
	const head = `{"jsonrpc":"2.0","id":`
	const mid = `,"result":`
	line = bytes.TrimRight(line, " \r\n")
	if !bytes.HasPrefix(line, []byte(head)) || len(line) < len(head)+len(mid)+3 || line[len(line)-1] != '}' {
		return nil
	}
	rest := line[len(head):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 18 || (n > 1 && rest[0] == '0') || !bytes.HasPrefix(rest[n:], []byte(mid)) {
		return nil
	}
	result := rest[n+len(mid) : len(rest)-1]
	if !json.Valid(result) {
		return nil // e.g. more keys after the result
	}
	buf := make([]byte, n+len(result))
	copy(buf, rest[:n])
	copy(buf[n:], result)
	return &protocol.Message{JSONRPC: "2.0", ID: buf[:n:n], Result: buf[n:]}
}

// plainJSONString decodes a JSON string result without the reflective decoder:
// plain text, and the escapes a tool's result (itself JSON) is full of. It
// declines (false) what it does not decode exactly as encoding/json would:
// \u escapes, invalid UTF-8 (replaced by U+FFFD there), anything malformed.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !utf8.Valid(body) {
		return "", false
	}
	i := bytes.IndexByte(body, '\\')
	if i < 0 {
		i = len(body)
	}
	for _, c := range body[:i] {
		if c == '"' || c < 0x20 {
			return "", false
		}
	}
	if i == len(body) {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	out = append(out, body[:i]...)
	for i < len(body) {
		c := body[i]
		if c == '"' || c < 0x20 {
			return "", false
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 == len(body) {
			return "", false
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}
