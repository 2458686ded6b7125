package chatui

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// stderrLines takes what hermes would write to stderr while the screen runs
// (warnings, plugin output) and hands it to the transcript, line by line, in
// order. Write never blocks on the program (a warning may be written before
// it starts, from the goroutine that starts it).
type stderrLines struct {
	mu      sync.Mutex
	partial string
	lines   []string
	wake    chan struct{}
}

func newStderrLines() *stderrLines { return &stderrLines{wake: make(chan struct{}, 1)} }

func (w *stderrLines) Write(b []byte) (int, error) {
	w.mu.Lock()
	text := w.partial + string(b)
	i := strings.LastIndexByte(text, '\n')
	if i >= 0 {
		for _, l := range strings.Split(text[:i], "\n") {
			w.lines = append(w.lines, termsafe.Colour(strings.TrimSuffix(l, "\r")))
		}
		text = text[i+1:]
	}
	w.partial = text
	w.mu.Unlock()
	if i >= 0 {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

func (w *stderrLines) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lines
	w.lines = nil
	return l
}

// forward sends the lines to the program until done closes.
func (w *stderrLines) forward(send func(tea.Msg), done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-w.wake:
			if l := w.take(); len(l) > 0 {
				send(stderrMsg{l})
			}
		}
	}
}

type stderrMsg struct{ lines []string }
