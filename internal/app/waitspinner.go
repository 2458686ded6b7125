package app

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// spinnerOutput is a chat's Output on a terminal: while the model is waited on
// it shows a spinner on stderr with what is happening and for how long (a hung
// endpoint is not silent), and takes the spinner away before the answer or any
// progress line is written.
type spinnerOutput struct {
	ChatOutput
	err   io.Writer
	now   func() time.Time
	delay time.Duration // no spinner for a model that answers at once

	mu     sync.Mutex
	drawn  bool // the spinner's line is on the screen
	status string
}

// spinnerDelay is how long a model call runs before the spinner shows.
const spinnerDelay = 400 * time.Millisecond

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Waiting implements agent.WaitDisplay.
func (o *spinnerOutput) Waiting(status string) (update func(string), done func()) {
	o.mu.Lock()
	o.status = termsafe.Line(status)
	o.mu.Unlock()
	start := o.now()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-stop:
			return
		case <-time.After(o.delay):
		}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			o.mu.Lock()
			fmt.Fprintf(o.err, "\r\x1b[K%s %s (%s)", spinnerFrames[i%len(spinnerFrames)], o.status,
				elapsed(o.now().Sub(start)))
			o.drawn = true
			o.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	update = func(s string) {
		o.mu.Lock()
		o.status = termsafe.Line(s)
		o.mu.Unlock()
	}
	done = func() {
		close(stop)
		<-stopped
		o.mu.Lock()
		o.clear()
		o.mu.Unlock()
	}
	return update, done
}

// clear takes the spinner's line away; o.mu is held.
func (o *spinnerOutput) clear() {
	if o.drawn {
		fmt.Fprint(o.err, "\r\x1b[K")
		o.drawn = false
	}
}

// Progress writes a status line where the spinner was; the spinner, if still
// running, comes back on the next line at its next frame.
func (o *spinnerOutput) Progress(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clear()
	o.ChatOutput.Progress(s)
}

func elapsed(d time.Duration) string { return fmt.Sprintf("%d s", int(d/time.Second)) }
