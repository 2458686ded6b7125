package gateway

import (
	"context"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// The delivery ledger's side of the runner: an answer is recorded before it
// is sent, marked once the platform took it, and sent again after a restart
// when the mark is missing.

// deliver sends a turn's answer through the ledger. A queued turn's answer
// (a cluster item's: delivery names it, "" for any other) goes out only once recorded and only while this process
// still holds the item's lease, checked again after the ledger's write,
// which may have waited long on an unreachable database: false says it was
// not sent for one of those reasons, and the item must go back to the queue,
// whose next delivery answers (from the stored answer, or by continuing the
// turn). Sending an answer the ledger could not record would make that next
// delivery's answer a duplicate.
func (r *Runner) deliver(a platform.Adapter, key string, out platform.Outbound, delivery string) (sent bool) {
	queued := delivery != ""
	lost := func() bool {
		if !queued || r.o.LeaseHeld == nil || r.o.LeaseHeld(delivery) {
			return false
		}
		r.log.Warn("gateway: not sending a queued answer: this process no longer surely holds the conversation's lease", "session_key", key)
		return true
	}
	if lost() {
		return false
	}
	if r.o.Ledger == nil {
		r.send(a, out)
		return true
	}
	ctx := context.Background()
	id, err := r.o.Ledger.Record(ctx, key, a.Name(), out)
	if err != nil {
		if queued {
			r.log.Warn("gateway: could not record a queued answer; its item goes back to the queue unsent", "session_key", key, "error", err)
			return false
		}
		r.log.Warn("gateway: could not record an answer before sending it", "session_key", key, "error", err)
		r.send(a, out)
		return true
	}
	if lost() {
		// Not this process's to send any more: marked, so no restart sends
		// it later beside the answer of the item's next delivery.
		if err := r.o.Ledger.Delivered(ctx, id); err != nil {
			r.log.Warn("gateway: delivery ledger", "error", err)
		}
		return false
	}
	r.sendRecorded(ctx, a, id, out, true)
	return true
}

func (r *Runner) sendRecorded(ctx context.Context, a platform.Adapter, id int64, out platform.Outbound, counted bool) {
	if !counted {
		if err := r.o.Ledger.Attempt(ctx, id); err != nil {
			r.log.Warn("gateway: delivery ledger", "error", err)
		}
	}
	if d, ok := a.(DeferredDelivery); ok {
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		deferred, err := d.SendRecorded(ctx, id, out)
		cancel()
		if err != nil {
			r.log.Warn("gateway: sending a reply failed", "platform", a.Name(), "chat_id", out.ChatID, "error", err)
		}
		if err != nil || deferred {
			return // unsent, or the process that sends it marks it
		}
	} else if r.trySend(a, out) != nil {
		return // stays unsent: tried again at the next start
	}
	r.sent <- id
}

// DeferredDelivery is an adapter that may hand a recorded answer to another
// process instead of sending it (a cluster member without the platform's
// connection queues it for the owner): a queued answer is not sent yet, so
// the runner leaves its ledger entry to the process that sends it.
type DeferredDelivery interface {
	// SendRecorded sends out, the ledger's answer id; deferred: it was handed
	// on, and whoever performs it marks the entry delivered.
	SendRecorded(ctx context.Context, id int64, out platform.Outbound) (deferred bool, err error)
}

// markSent commits the sent marks: what has gathered once the previous
// commit is done, so a busy gateway commits many marks at once.
func (r *Runner) markSent() {
	for id := range r.sent {
		ids := []int64{id}
	gather:
		for len(ids) < 512 {
			select {
			case more, ok := <-r.sent:
				if !ok {
					break gather
				}
				ids = append(ids, more)
			default:
				break gather
			}
		}
		if err := r.o.Ledger.Delivered(context.Background(), ids...); err != nil {
			r.log.Warn("gateway: delivery ledger", "error", err)
		}
	}
}

// recoveredPrefix marks an answer whose send had begun before a crash.
const recoveredPrefix = "♻️ Recovered reply — sent again after the gateway restarted; it may be a duplicate.\n\n"

// RedeliversOnLead marks an adapter whose connection one process of a
// cluster holds at a time: what the ledger owes its chats is sent by
// whichever process gains the connection (it calls Redeliver from its Run),
// not by every process at its start.
type RedeliversOnLead interface {
	RedeliversOnLead()
}

// Redeliver sends what the ledger owes a's chats; only from within a's Run
// (the runner is serving, its sent marks still taken).
func (r *Runner) Redeliver(a platform.Adapter) {
	if r.o.Ledger != nil && r.sent != nil {
		r.redeliver(a)
	}
}

// redeliver sends what the ledger still owes a's chats.
func (r *Runner) redeliver(a platform.Adapter) {
	ctx := context.Background()
	owed, err := r.o.Ledger.Unsent(ctx, a.Name())
	if err != nil {
		r.log.Warn("gateway: reading the delivery ledger", "platform", a.Name(), "error", err)
		return
	}
	for _, u := range owed {
		out := u.Out
		if u.Attempts > 0 {
			out.Text = recoveredPrefix + out.Text
		}
		r.log.Info("gateway: delivering an answer a restart kept from its chat", "platform", a.Name(), "chat_id", out.ChatID, "attempts", u.Attempts)
		r.sendRecorded(ctx, a, u.ID, out, false)
	}
}
