package app

import (
	"context"
	"errors"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
)

// An update that acts on a conversation's running turn (an approval button,
// /approve, /deny, /stop: gateway.ActsOnRunningTurn) cannot wait in the
// queue: the queue runs a conversation's items one at a time, so it would
// be claimed only after the turn it answers had timed out. It goes instead
// to the process holding the conversation's lease, through that member's
// own outbox role, where the runner handles it at once (its question is
// pending there, in memory).

// routeToTurn sends raw to the member running key's item; routed is false
// when no live lease holds key (nothing runs: the update is queued as any
// other, and answered "nothing is waiting"). Deduped by update id, as
// Enqueue is.
func routeToTurn(ctx context.Context, node *cluster.Node, platform, updateID, key string, raw []byte) (routed bool, err error) {
	holder, err := node.LeaseHolder(ctx, key)
	if err != nil || holder == "" {
		return false, err
	}
	if _, err := node.SendUpdate(ctx, platform, updateID, cluster.MemberRole(holder), raw); err != nil {
		return false, err
	}
	return true, nil
}

// serveTurnActions handles the updates routed to this process's running
// turns, until ctx ends. One whose turn ended meanwhile is answered as with
// nothing running ("this question is no longer open").
func (g *Gateway) serveTurnActions(ctx context.Context, node *cluster.Node) {
	c := g.cluster
	role := cluster.MemberRole(node.ID())
	for {
		act, err := node.NextAction(ctx, role)
		if err != nil {
			return
		}
		if c.telegram.Identified() || c.telegram.Identify(ctx) == nil {
			if ev, ok := c.telegram.Decode(ctx, act.Payload); ok {
				// Buttons and these commands are handled on the spot, not in a lane.
				if err := g.runner.HandleQueued(ctx, telegram.Name, ev); err != nil && !errors.Is(err, gateway.ErrDraining) {
					c.log.Warn("gateway: an update routed to this process's turn failed", "error", err)
				}
			}
		}
		if err := node.Ack(context.WithoutCancel(ctx), act); err != nil && !errors.Is(err, cluster.ErrLeaseLost) {
			c.log.Warn("gateway: could not ack a routed update", "action", act.ID, "error", err)
		}
	}
}
