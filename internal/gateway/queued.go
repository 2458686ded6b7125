package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// errLeaseLost stops a queued turn whose process can no longer be sure it
// still holds the conversation (its heartbeats stopped reaching the
// database): another process may be running it.
var errLeaseLost = errors.New("gateway: this process lost the conversation's lease; another process runs it")

// errNotSent is a queued turn's error when its answer was not sent: the
// ledger could not record it, or the lease was no longer surely held.
var errNotSent = errors.New("gateway: the answer was not sent (not recorded, or the lease in doubt); the queue delivers the update again")

// StopQueued interrupts key's running turn because the queue lease of the
// item it answers (delivery, as platform.Event.Delivery names it) is in
// doubt: nothing is answered, and HandleQueued returns the reason. A turn of
// another delivery (a newer item, queued behind a stale one) runs on.
func (r *Runner) StopQueued(key, delivery string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lanes[key]; l != nil && l.cancel != nil && (delivery == "" || l.delivery == "" || l.delivery == delivery) {
		l.cancel(errLeaseLost)
	}
}

// ErrDraining says the runner is stopping and took no new work: a queue
// item handed to it then goes back to its queue.
var ErrDraining = errors.New("gateway: draining: no new turns are started")

// HandleQueued runs one event taken from a shared work queue (a cluster's,
// in webhook mode) as if platformName's adapter had just received it, and
// returns once it is handled: its turn has run and its answer is recorded in
// the delivery ledger (and sent), or it needed no turn (a command, an
// unauthorised sender). The caller finishes the queue item only then, so a
// crash before leaves the item to be delivered again. A turn that fails
// (the database away, the model refusing) sends no apology: its error is
// returned for the queue to retry the item.
func (r *Runner) HandleQueued(ctx context.Context, platformName string, ev platform.Event) error {
	a, ok := r.adapters[platformName]
	if !ok {
		return fmt.Errorf("gateway: a queued event for platform %s, which this gateway does not serve", platformName)
	}
	r.mu.Lock()
	draining := r.draining
	r.mu.Unlock()
	if draining {
		return ErrDraining
	}
	w := &queuedWait{done: make(chan struct{}), delivery: ev.Delivery}
	if !r.dispatchTo(ctx, a, ev, w) {
		r.mu.Lock()
		draining = r.draining
		r.mu.Unlock()
		if draining {
			return ErrDraining
		}
		return nil
	}
	// The turn runs under the runner's own context (a drain bounds it), so
	// this waits for it even when ctx ends: finishing the item early would
	// lose it if the process then died.
	<-w.done
	return w.err
}

// queuedWait is HandleQueued's wait for its lane: done is closed when the
// lane retires; err is a failed turn's error, set before; delivery is the
// event's (platform.Event.Delivery).
type queuedWait struct {
	done     chan struct{}
	err      error
	delivery string
}

// queuedFail hands a failed turn's error to the queue items waiting on l
// (true), which then retry it, instead of answering the chat with it. A
// turn that answers a named delivery fails only that item's wait: a stale
// turn unwinding in the lane does not fail the newer item queued behind it.
func (r *Runner) queuedFail(l *lane, delivery string, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	hit := false
	for _, w := range l.waiters {
		if delivery == "" || w.delivery == "" || w.delivery == delivery {
			w.err, hit = err, true
		}
	}
	return hit
}

// Notify sends a plain message to a chat (outside any turn): the queue's
// word that an update was given up.
func (r *Runner) Notify(platformName string, out platform.Outbound) {
	if a, ok := r.adapters[platformName]; ok {
		r.send(a, out)
	}
}

// DeliverStored sends, through the delivery ledger, an answer a queue item's
// earlier delivery stored but may not have sent (its process died between
// the two): marked as a possible duplicate, the ledger's one allowed
// redelivery. delivery names the item, as platform.Event.Delivery does.
func (r *Runner) DeliverStored(platformName, key, delivery string, out platform.Outbound) error {
	a, ok := r.adapters[platformName]
	if !ok {
		return fmt.Errorf("gateway: no adapter for platform %s", platformName)
	}
	r.mu.Lock()
	if r.draining {
		r.mu.Unlock()
		return ErrDraining
	}
	r.running.Add(1) // the drain waits for it, so the ledger's marks are still taken
	r.mu.Unlock()
	defer r.running.Done()
	out.Text = recoveredPrefix + out.Text
	if !r.deliver(a, key, out, delivery) {
		return errNotSent
	}
	return nil
}

// SessionKey is the key ev's session is stored under, as dispatch derives it.
func (r *Runner) SessionKey(platformName string, ev platform.Event) string {
	src := ev.Source
	src.Platform = platformName
	return platform.SessionKey(src, r.o.Keys)
}

// DrainTimeout is how long a stop lets running turns finish.
func (r *Runner) DrainTimeout() time.Duration { return r.o.DrainTimeout }

// TurnDelivery is what a turn's ctx says of the queue delivery it answers
// (TurnDeliveryFrom): ID is stored with the turn's user message; Stored
// says that message is stored already and the turn continues from it.
type TurnDelivery struct {
	ID     string
	Stored bool
}

type turnDeliveryKey struct{}

// TurnDeliveryFrom is the delivery a turn run under ctx answers (zero
// outside a queued turn).
func TurnDeliveryFrom(ctx context.Context) TurnDelivery {
	d, _ := ctx.Value(turnDeliveryKey{}).(TurnDelivery)
	return d
}

// queuedTurn is one turn's text for batch, and its ctx carrying the queue
// delivery it answers. A stored event's text is in the history already; a
// batch of nothing else continues the stored turn (Stored, no text). A
// cluster runs one queue item per conversation at a time, so a batch holds
// at most one delivery; the first one names the turn.
func queuedTurn(ctx context.Context, batch []platform.Event) (context.Context, string) {
	texts := make([]string, 0, len(batch))
	d := TurnDelivery{ID: batchDelivery(batch)}
	for _, ev := range batch {
		if !ev.Stored {
			texts = append(texts, ev.Text)
		}
	}
	d.Stored = len(texts) == 0
	if d.ID == "" {
		d.Stored = false
		return ctx, strings.Join(texts, "\n\n")
	}
	return context.WithValue(ctx, turnDeliveryKey{}, d), strings.Join(texts, "\n\n")
}

// batchDelivery is the queue delivery a lane's batch answers ("" for none).
func batchDelivery(batch []platform.Event) string {
	for _, ev := range batch {
		if ev.Delivery != "" {
			return ev.Delivery
		}
	}
	return ""
}
