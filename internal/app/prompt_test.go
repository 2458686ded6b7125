package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// TestReadLineGivesUpWithoutLosingTheLine: a prompt that gives up (its ctx ends)
// while the read is blocked returns at once, and the line that arrives later is
// the next prompt's, not lost to the abandoned read.
func TestReadLineGivesUpWithoutLosingTheLine(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var out syncbuf.Buffer
	s := &IOStreams{In: r, Out: &out, InTTY: true, OutTTY: true}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Confirm(ctx, "Sure? [y/N] ")
		done <- err
	}()
	for !strings.Contains(out.String(), "Sure?") {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Confirm after an interrupt: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Confirm did not notice the interrupt while its read was blocked")
	}

	if _, err := w.Write([]byte("yes\nsecond\n")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"yes\n", "second\n"} {
		got, err := s.ReadLine(context.Background())
		if err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	w.Close()
	if got, err := s.ReadLine(context.Background()); got != "" || err == nil {
		t.Fatalf("ReadLine at EOF = %q, %v", got, err)
	}
}

func TestConfirmAnswers(t *testing.T) {
	tests := []struct {
		input string
		tty   bool
		want  bool
	}{
		{"y\n", true, true},
		{"YES\n", true, true},
		{" yes \n", true, true},
		{"n\n", true, false},
		{"\n", true, false},
		{"yep\n", true, false},
		{"", true, false},     // EOF
		{"y\n", false, false}, // no terminal: never asked
	}
	for _, tt := range tests {
		var out bytes.Buffer
		s := &IOStreams{In: bytes.NewBufferString(tt.input), Out: &out, InTTY: tt.tty, OutTTY: tt.tty}
		got, err := s.Confirm(context.Background(), "? ")
		if err != nil || got != tt.want {
			t.Errorf("Confirm(%q, tty %v) = %v, %v; want %v", tt.input, tt.tty, got, err, tt.want)
		}
	}
}
