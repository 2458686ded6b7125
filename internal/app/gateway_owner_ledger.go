package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// The delivery ledger across an owned connection: a process without the
// connection queues a recorded answer for the owner with its ledger id and
// leaves it unmarked; the owner marks it delivered once the platform took
// it, before it acks the action. One the owner could not send at all stays
// owed and is redelivered by the process that next gains the connection.

// ownerLedger is what the owner needs of the ledger (storeLedger).
type ownerLedger interface {
	Delivered(ctx context.Context, ids ...int64) error
	Sent(ctx context.Context, id int64) (bool, error)
}

func (o *ownedAdapter) setLedger(l ownerLedger) {
	o.injectMu.Lock()
	o.ledger = l
	o.injectMu.Unlock()
}

func (o *ownedAdapter) ownerLedger() ownerLedger {
	o.injectMu.Lock()
	defer o.injectMu.Unlock()
	return o.ledger
}

// SendRecorded sends answer id on the owner's connection, or, elsewhere,
// queues it for the owner, which marks it (deferred: the runner must not).
func (o *ownedAdapter) SendRecorded(ctx context.Context, id int64, out platform.Outbound) (deferred bool, err error) {
	if !o.leading.Load() {
		return true, o.route(ctx, ownerAction{Op: opSend, Out: &out, Ledger: id})
	}
	if !o.sends.begin(id) {
		return true, nil // the outbox has it in hand here, or sent and marked it
	}
	_, err = o.inner.Send(ctx, out)
	o.sends.end(id, err == nil)
	return false, err
}

// performRecorded is a routed send of ledger answer id on the owner: not
// sent again when the ledger says it went out (an owner that died between
// its mark and its ack), marked before the caller acks.
func (o *ownedAdapter) performRecorded(ctx context.Context, id int64, out platform.Outbound, retry *bool) error {
	if !o.sends.begin(id) {
		return nil // redelivered here a moment ago, or being redelivered now
	}
	sent := false
	defer func() { o.sends.end(id, sent) }()
	l := o.ownerLedger()
	if l != nil {
		done, err := l.Sent(ctx, id)
		if err != nil {
			*retry = true
			return fmt.Errorf("reading the delivery ledger before a routed send: %w", err)
		}
		if done {
			return nil
		}
	}
	res, err := o.inner.Send(ctx, out)
	if err != nil {
		*retry = res.Retryable
		return err
	}
	sent = true
	if l != nil {
		o.markDelivered(ctx, l, id)
	}
	return nil
}

// markDelivered retries while the database is briefly away: an answer sent
// and left unmarked is sent again, as a possible duplicate, by the next owner.
func (o *ownedAdapter) markDelivered(ctx context.Context, l ownerLedger, id int64) {
	var err error
	for delay := 100 * time.Millisecond; delay <= 2*time.Second; delay *= 2 {
		if err = l.Delivered(ctx, id); err == nil {
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			delay = 4 * time.Second // give up
		case <-t.C:
		}
	}
	o.log.Warn("gateway: a routed answer was sent but could not be marked in the delivery ledger; the next owner may send it again", "platform", o.Name(), "delivery", id, "error", err)
}

// recentSendsFor is how long the owner remembers a ledger answer it sent:
// longer than the runner takes to commit its batched marks, after which the
// ledger itself knows.
const recentSendsFor = 5 * time.Minute

// recentSends keeps the owner from sending one ledger answer twice when two
// of its paths reach it together: the outbox performing a routed send, and
// the redelivery on gaining the connection, whose list of owed answers may
// predate that send.
type recentSends struct {
	mu    sync.Mutex
	busy  map[int64]bool
	sent  map[int64]time.Time
	order []int64 // sent, oldest first
}

// begin claims id for a send; false when it is in hand or was sent lately.
func (r *recentSends) begin(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := clock.Now()
	for len(r.order) > 0 && now.Sub(r.sent[r.order[0]]) > recentSendsFor {
		delete(r.sent, r.order[0])
		r.order = r.order[1:]
	}
	if _, done := r.sent[id]; done || r.busy[id] {
		return false
	}
	if r.busy == nil {
		r.busy, r.sent = map[int64]bool{}, map[int64]time.Time{}
	}
	r.busy[id] = true
	return true
}

func (r *recentSends) end(id int64, sent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.busy, id)
	if sent {
		r.sent[id] = clock.Now()
		r.order = append(r.order, id)
	}
}

// setLedger gives every owned connection the ledger it marks routed answers in.
func (w *gatewayOwners) setLedger(l gateway.Ledger) {
	ol, ok := l.(ownerLedger)
	if w == nil || !ok {
		return
	}
	for _, o := range w.owned {
		o.setLedger(ol)
	}
}

// queuedAnswers are the ledger ids of routed sends still in role's outbox:
// the outbox performs them, so a new owner's redelivery leaves them out.
func queuedAnswers(ctx context.Context, n *cluster.Node, role string) (map[int64]bool, error) {
	payloads, err := n.PendingPayloads(ctx, role)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, p := range payloads {
		var a ownerAction
		if json.Unmarshal(p, &a) == nil && a.Op == opSend && a.Ledger != 0 {
			out[a.Ledger] = true
		}
	}
	return out, nil
}
