package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SendToOnce is SendTo for an incoming update, deduped like Enqueue: the
// update id is recorded and the action queued in one statement, so an update
// accepted again (a webhook retried, a batch polled again after a takeover)
// is not sent twice (sent false, no error), and a crash leaves both or
// neither.
func (n *Node) SendToOnce(ctx context.Context, platform, updateID, member string, payload []byte) (sent bool, err error) {
	if platform == "" || updateID == "" || member == "" {
		return false, fmt.Errorf("cluster: send an update to a member needs a platform, an update id and the member (got %q, %q, %q)", platform, updateID, member)
	}
	if payload == nil {
		payload = []byte{}
	}
	role := memberRole(member)
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
		return false, fmt.Errorf("cluster: send %s update %s to %s: %w", platform, updateID, member, err)
	}
	return true, nil
}
