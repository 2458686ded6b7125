package app

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
)

// enqueueTelegram takes one Telegram update in a cluster, webhook or polled
// alike, keyed by its update id, so a webhook retried or a batch polled
// again after a takeover is taken once. It is queued, and its conversation's
// turns run on any process in the order the updates were queued; a control
// event (a button press, /stop, /approve, /deny) of a conversation whose
// turn runs now goes to the process running it instead, as Discord's do:
// queued, it would wait behind the very turn it answers until its question
// timed out.
func (g *Gateway) enqueueTelegram(ctx context.Context, updateID int64, ev platform.Event, raw []byte) error {
	node, err := g.openCluster(ctx)
	if err != nil {
		return err
	}
	key := g.runner.SessionKey(telegram.Name, ev)
	id := strconv.FormatInt(updateID, 10)
	if controlEvent(ev) {
		if routed, err := g.telegramControl(ctx, node, id, key, ev); routed || err != nil {
			return err
		}
	}
	_, err = node.Enqueue(ctx, telegram.Name, id, key, raw)
	return err
}

// telegramControl passes a control event to the member whose lease holds
// key (serveDirect dispatches it there); routed is false when none does
// (nothing runs: queued as any update, and answered "no longer open" or
// "nothing is running"). An error leaves the update unaccepted (the webhook
// asks for a retry, the poll does not confirm it).
func (g *Gateway) telegramControl(ctx context.Context, node *cluster.Node, id, key string, ev platform.Event) (routed bool, err error) {
	holder, ok, err := node.Holder(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	b, err := platform.MarshalEvent(ev)
	if err == nil {
		b, err = json.Marshal(directAction{Op: opControl, Platform: telegram.Name, Event: b})
	}
	if err != nil {
		return false, nil // cannot be carried: queued instead
	}
	sent, err := node.SendToOnce(ctx, telegram.Name, id, holder, b)
	if err != nil {
		return false, err
	}
	if sent {
		g.cluster.log.Info("gateway: a control event went to the process running its conversation", "session_key", key, "member", holder, "kind", string(ev.Kind))
		if ev.Ack != nil {
			ev.Ack("") // the press is acknowledged here; its outcome shows on the question
		}
	}
	return true, nil
}
