package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hermes-go/hermes/internal/jsonx"
)

// ErrMessageTooLarge is returned when a peer sends a line longer than the cap.
var ErrMessageTooLarge = errors.New("protocol message exceeds the size cap")

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

// EncodeMessage encodes msg as one protocol line, newline included. <, > and &
// are left as they are: escaped, a tool result full of HTML would grow sixfold
// on the wire, past the size cap.
func EncodeMessage(msg *Message) ([]byte, error) {
	b, err := jsonx.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeMessage decodes one protocol line.
func DecodeMessage(line []byte) (*Message, error) {
	var msg Message
	if err := json.Unmarshal(line, &msg); err != nil {
		return nil, fmt.Errorf("malformed protocol message %q: %w", truncate(line, 120), err)
	}
	if msg.JSONRPC != "2.0" {
		return nil, fmt.Errorf("protocol message without jsonrpc 2.0: %q", truncate(line, 120))
	}
	return &msg, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// LineReader reads protocol lines of at most a cap. A read that fails part-way
// through a line keeps what it had, so a reader interrupted by a read deadline
// goes on with the same line next time.
type LineReader struct {
	br      *bufio.Reader
	max     int
	partial []byte // bytes of an unfinished line
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// ReadLine returns the next line that is not blank, valid until the next call.
// A line over the cap is an error wrapping ErrMessageTooLarge; a last line
// without its newline is returned at the end of the stream.
func (l *LineReader) ReadLine() ([]byte, error) {
	for {
		line, err := l.readLine()
		if err != nil || len(bytes.TrimSpace(line)) > 0 {
			return line, err
		}
	}
}

func (l *LineReader) readLine() ([]byte, error) {
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(l.partial)+len(chunk) > l.max+1 {
			l.partial = nil
			return nil, fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, l.max)
		}
		if err == nil {
			if len(l.partial) == 0 {
				return chunk, nil
			}
			line := append(l.partial, chunk...)
			l.partial = nil
			return line, nil
		}
		l.partial = append(l.partial, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(l.partial) > 0 {
			line := l.partial
			l.partial = nil
			return line, nil
		}
		return nil, err
	}
}
