package agent

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

// WaitDisplay is an Output that can show the wait for the model as it happens
// (a spinner on a terminal): Waiting starts showing status, update replaces
// it (a retry), done removes it, before any text of the answer is shown. An
// Output without it gets each retry as a Progress line.
type WaitDisplay interface {
	Waiting(status string) (update func(status string), done func())
}

// modelWait is one model call's wait, as the Output shows it.
type modelWait struct {
	out    Output
	update func(string)
	done   func()
	once   sync.Once
}

func (a *Agent) startWait() *modelWait {
	w := &modelWait{out: a.o.Output}
	if d, ok := a.o.Output.(WaitDisplay); ok {
		w.update, w.done = d.Waiting("waiting for " + a.o.Model)
	}
	return w
}

// retry shows that an attempt failed and another follows.
func (w *modelWait) retry(line string) {
	switch {
	case w == nil:
	case w.update != nil:
		w.update(line)
	case w.out != nil:
		w.out.Progress(line)
	}
}

// end stops showing the wait; later calls do nothing.
func (w *modelWait) end() {
	if w != nil && w.done != nil {
		w.once.Do(w.done)
	}
}

// retryLine says why attempt failed and that retry n of max follows:
// "model did not answer in 120 s, retry 2/3".
func retryLine(err error, n, max int, wait time.Duration) string {
	why := err.Error()
	var ae *llm.APIError
	if errors.As(err, &ae) {
		why = ae.Summary()
	}
	line := fmt.Sprintf("%s, retry %d/%d", why, n, max)
	if wait >= time.Second {
		line += " in " + llm.Seconds(wait)
	}
	return line
}
