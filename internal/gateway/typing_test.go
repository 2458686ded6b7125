package gateway

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// typingAdapter's Typing blocks until release is closed (or its context
// ends) and reports whether it was cancelled.
type typingAdapter struct {
	entered   chan struct{}
	release   chan struct{}
	cancelled chan bool
}

func (a *typingAdapter) Name() string                                       { return "test" }
func (a *typingAdapter) Run(context.Context, platform.Handler) error        { return nil }
func (a *typingAdapter) Edit(context.Context, string, string, string) error { return nil }
func (a *typingAdapter) Connected() bool                                    { return true }
func (a *typingAdapter) Send(context.Context, platform.Outbound) (platform.SendResult, error) {
	return platform.SendResult{}, nil
}

func (a *typingAdapter) Typing(ctx context.Context, _, _ string) error {
	a.entered <- struct{}{}
	select {
	case <-a.release:
		a.cancelled <- false
	case <-ctx.Done():
		a.cancelled <- true
	}
	return ctx.Err()
}

// Stopping the typing action lets one in flight finish: cancelling it cost
// its connection (a quick turn ends while its action is on the wire).
func TestTypingStopLetsTheActionInFlightFinish(t *testing.T) {
	r := &Runner{o: Options{TypingEvery: time.Hour}, log: slog.New(slog.DiscardHandler)}
	a := &typingAdapter{entered: make(chan struct{}, 1), release: make(chan struct{}), cancelled: make(chan bool, 1)}
	stop := r.typing(context.Background(), a, platform.Source{ChatID: "1"})
	<-a.entered
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	time.Sleep(20 * time.Millisecond) // let stop begin waiting (were it to cancel, it would have by now)
	close(a.release)
	if <-a.cancelled {
		t.Error("stopping cancelled the typing action in flight")
	}
	<-stopped
}

// One that does not finish is cancelled after the grace, so an answer never
// waits long for it.
func TestTypingStopCancelsAHungAction(t *testing.T) {
	r := &Runner{o: Options{TypingEvery: time.Hour}, log: slog.New(slog.DiscardHandler)}
	a := &typingAdapter{entered: make(chan struct{}, 1), release: make(chan struct{}), cancelled: make(chan bool, 1)}
	stop := r.typing(context.Background(), a, platform.Source{ChatID: "1"})
	<-a.entered
	stop()
	if !<-a.cancelled {
		t.Error("a hung typing action was not cancelled")
	}
}
