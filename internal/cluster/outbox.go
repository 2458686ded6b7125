package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Action is a platform action addressed to a role (send on the Discord
// connection, inject a message), carried by the outbox to whichever process
// leads the role.
type Action struct {
	ID      int64
	Role    string
	Payload []byte
	// Attempt above 1: an earlier leader claimed it and did not ack (it died
	// or lost leadership mid-action).
	Attempt    int
	EnqueuedAt time.Time
	holder     string
}

// Send queues an action for role's leader, from any process.
func (n *Node) Send(ctx context.Context, role string, payload []byte) error {
	if role == "" {
		return errors.New("cluster: send needs a role (the name passed to Elect)")
	}
	if payload == nil {
		payload = []byte{}
	}
	_, err := n.pool.Exec(ctx, `
WITH i AS (INSERT INTO cluster_outbox (role, payload) VALUES ($1, $2) RETURNING id)
SELECT i.id, pg_notify('`+outboxChannel+`', $1) FROM i`, role, payload)
	if err != nil {
		return fmt.Errorf("cluster: send to %s: %w", role, err)
	}
	return nil
}

// ClaimAction takes role's oldest action not claimed by a live claim, or nil.
// Only the leader calls it (from onLead); the claim expires after LeaseTTL so
// a leader that died mid-action leaves it to the next.
func (n *Node) ClaimAction(ctx context.Context, role string) (*Action, error) {
	a := &Action{Role: role, holder: n.cfg.ID}
	err := n.pool.QueryRow(ctx, `
UPDATE cluster_outbox o SET claimed_by = $2, attempts = o.attempts + 1,
	claimed_until = now() + $3 * interval '1 millisecond'
WHERE o.id = (
	SELECT id FROM cluster_outbox
	WHERE role = $1 AND (claimed_until IS NULL OR claimed_until <= now())
	ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING o.id, o.payload, o.attempts, o.enqueued_at`, role, n.cfg.ID, n.cfg.LeaseTTL.Milliseconds()).Scan(
		&a.ID, &a.Payload, &a.Attempt, &a.EnqueuedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: claim action for %s: %w", role, err)
	}
	return a, nil
}

// Ack removes a performed action. ErrLeaseLost: its claim had expired and
// another leader may have performed it too.
func (n *Node) Ack(ctx context.Context, a *Action) error {
	tag, err := n.pool.Exec(ctx, `DELETE FROM cluster_outbox WHERE id = $1 AND claimed_by = $2 AND attempts = $3`, a.ID, a.holder, a.Attempt)
	if err != nil {
		return fmt.Errorf("cluster: ack action %d: %w", a.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLeaseLost
	}
	return nil
}

// NextAction blocks until an action for role is claimed or ctx ends (the
// leadership context, typically), waking on NOTIFY and polling every Poll.
func (n *Node) NextAction(ctx context.Context, role string) (*Action, error) {
	for {
		wake := n.outboxSignal()
		a, err := n.ClaimAction(ctx, role)
		if err == nil && a != nil {
			return a, nil
		}
		wait := n.cfg.Poll
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// PendingPayloads are the payloads of role's actions not yet acked, claimed
// or not: what the outbox will still perform. The owner that takes a role
// over reads them so it does not also redeliver, from elsewhere, what the
// outbox is about to do.
func (n *Node) PendingPayloads(ctx context.Context, role string) ([][]byte, error) {
	rows, err := n.pool.Query(ctx, `SELECT payload FROM cluster_outbox WHERE role = $1 ORDER BY id`, role)
	if err != nil {
		return nil, fmt.Errorf("cluster: pending actions of %s: %w", role, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("cluster: pending actions of %s: %w", role, err)
	}
	return out, nil
}
