package protocol

import (
	"fmt"
)

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
