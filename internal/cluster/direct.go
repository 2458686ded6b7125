package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Direct actions are outbox actions addressed to one member rather than to a
// role's leader: what only the process running a conversation's turn can act
// on (an approval's answer, /stop), found through the conversation's lease.

// memberRole is the outbox role of one member's direct actions.
func memberRole(member string) string { return "member:" + member }

// Holder is the member whose live lease holds sessionKey's conversation
// (running one of its items); ok false when none does.
func (n *Node) Holder(ctx context.Context, sessionKey string) (member string, ok bool, err error) {
	err = n.pool.QueryRow(ctx, `SELECT holder FROM cluster_leases WHERE session_key = $1 AND expires_at > now()`, sessionKey).Scan(&member)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cluster: who holds %s: %w", sessionKey, err)
	}
	return member, true, nil
}

// SendTo queues an action for one member (Holder's answer).
func (n *Node) SendTo(ctx context.Context, member string, payload []byte) error {
	if member == "" {
		return errors.New("cluster: send to a member needs its id")
	}
	return n.Send(ctx, memberRole(member), payload)
}

// NextDirect blocks until an action addressed to this member is claimed or
// ctx ends; Ack it once performed.
func (n *Node) NextDirect(ctx context.Context) (*Action, error) {
	return n.NextAction(ctx, memberRole(n.cfg.ID))
}

// pruneDirectSQL drops the direct actions of members no longer alive: only
// they could have performed them, and the turn they were for is gone.
const pruneDirectSQL = `DELETE FROM cluster_outbox o WHERE o.role LIKE 'member:%' AND NOT EXISTS (
	SELECT 1 FROM cluster_members m WHERE o.role = 'member:' || m.id AND m.last_seen > now() - $1 * interval '1 millisecond')`
