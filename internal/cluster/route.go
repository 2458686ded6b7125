package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// MemberRole is the outbox role of one member: actions only that process
// can perform (an answer to a question its running turn asked).
func MemberRole(id string) string { return "member:" + id }

// LeaseHolder is the member holding sessionKey's live lease (the process
// running its item now), or "" when none does.
func (n *Node) LeaseHolder(ctx context.Context, sessionKey string) (string, error) {
	var holder string
	err := n.pool.QueryRow(ctx, `SELECT holder FROM cluster_leases WHERE session_key = $1 AND expires_at > now()`, sessionKey).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cluster: lease of %s: %w", sessionKey, err)
	}
	return holder, nil
}

// SendUpdate is Send for an incoming update that is deduped like Enqueue's:
// the update id is recorded and the action queued in one statement, so an
// update accepted again (a webhook retried, a batch polled again) is not
// sent twice (sent false, no error), and a crash leaves both or neither.
func (n *Node) SendUpdate(ctx context.Context, platform, updateID, role string, payload []byte) (sent bool, err error) {
	if platform == "" || updateID == "" || role == "" {
		return false, fmt.Errorf("cluster: send update needs a platform, an update id and a role (got %q, %q, %q)", platform, updateID, role)
	}
	if payload == nil {
		payload = []byte{}
	}
	err = n.pool.QueryRow(ctx, `
WITH s AS (
	INSERT INTO cluster_seen (platform, update_id) VALUES ($1, $2)
	ON CONFLICT DO NOTHING RETURNING 1
), i AS (
	INSERT INTO cluster_outbox (role, payload) SELECT $3, $4 FROM s RETURNING id
)
SELECT pg_notify('`+outboxChannel+`', $3)::text FROM i`, platform, updateID, role, payload).Scan(new(string))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: send %s update %s to %s: %w", platform, updateID, role, err)
	}
	return true, nil
}
