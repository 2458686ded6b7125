package pipeio_test

import (
	"bufio"
	"context"
	"os"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/runtime/pipeio"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// BenchmarkToolCallGo is the Go side of BenchmarkToolCallPython without
// Python: the host's connection calls a tool of a peer goroutine that answers
// each line with the hello-world result and does nothing else, over os.Pipe.
// The peer shares the process (and its Ps) with the caller, so the figure is
// for comparing versions of the host's side, not a plugin's round trip.
func BenchmarkToolCallGo(b *testing.B) {
	toR, toW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go answerToolCalls(toR, fromW)
	c := pipeio.NewConn(fromR, toW, nil, protocol.ConnOptions{})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	defer func() {
		c.Close()
		toW.Close()
		<-ran
		fromR.Close()
	}()
	ctx := context.Background()
	params := protocol.ToolCallParams{Handle: "h1", Args: map[string]any{"name": "Ada"}}
	for b.Loop() {
		var out string
		if err := c.Call(ctx, protocol.MethodToolCall, params, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// answerToolCalls answers every request line on r with the hello-world result,
// until r ends; then it closes both ends it holds.
func answerToolCalls(r, w *os.File) {
	defer r.Close()
	defer w.Close()
	const head = `{"jsonrpc":"2.0","id":`
	br := bufio.NewReader(r)
	var out []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		j := len(head)
		for j < len(line) && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		out = append(append(append(out[:0], head...), line[len(head):j]...),
			`,"result":"{\"success\": true, \"greeting\": \"Hello, Ada!\"}"}`+"\n"...)
		if _, err := w.Write(out); err != nil {
			return
		}
	}
}
