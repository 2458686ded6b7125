package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hermes-go/hermes/internal/app"
)

// maxStdinPrompt bounds `chat -q -`: a prompt is text for a model, and a larger
// input is far more likely a wrong redirection than a prompt.
const maxStdinPrompt = 1 << 20

// readPrompt reads the whole of standard input as the prompt of `chat -q -`. The
// read runs on its own goroutine so that Ctrl-C ends it (a read of a terminal
// does not return for a signal).
func readPrompt(ctx context.Context, s *app.IOStreams) (string, error) {
	if s.InTTY {
		fmt.Fprintln(s.Err, "Reading the prompt from the terminal; end it with Ctrl-D.")
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(s.In, maxStdinPrompt+1))
		ch <- result{b, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	switch {
	case r.err != nil:
		return "", app.Failf("Error: reading the prompt from standard input: %v", r.err)
	case len(r.b) > maxStdinPrompt:
		return "", app.Failf("Error: the prompt on standard input is over %d MiB; nothing was sent. Pass a shorter prompt, or have the model read the file with its tools.", maxStdinPrompt>>20)
	}
	q := strings.TrimRight(string(r.b), "\r\n")
	if strings.TrimSpace(q) == "" {
		return "", app.Failf("Error: the prompt read from standard input is empty: nothing was sent. Pipe the prompt in, e.g. echo 'hello' | hermes chat -q -")
	}
	return q, nil
}
