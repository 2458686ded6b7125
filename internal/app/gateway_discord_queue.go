package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// Discord messages in a cluster (issue 19) go through the work queue, as
// Telegram's webhook updates do: the process that owns the websocket queues
// each accepted message (the dedupe and the queue row in one statement), and
// any process's worker runs the turn under the conversation's lease, with
// redelivery after a crash. What acts on a running turn (a button press, /stop,
// /approve, /deny) is not queued behind it: it goes to the process whose
// lease holds the conversation. docs/SCALING.md has the reasoning.

// discordAccept is the Discord adapter's Accept in a cluster.
func (g *Gateway) discordAccept(node *cluster.Node) func(ctx context.Context, ev platform.Event) (discord.Acceptance, error) {
	return func(ctx context.Context, ev platform.Event) (discord.Acceptance, error) {
		if ev.MessageID == "" || controlEvent(ev) {
			return discord.Local, nil
		}
		payload, err := platform.MarshalEvent(ev)
		if err != nil {
			return discord.Local, nil // cannot be queued: handled here, as without a cluster
		}
		queued, err := node.Enqueue(ctx, discord.Name, ev.MessageID, g.runner.SessionKey(discord.Name, ev), payload)
		if err != nil {
			return 0, err
		}
		if !queued {
			return discord.Duplicate, nil
		}
		return discord.Queued, nil
	}
}

// controlEvent: ev acts on the conversation's running turn rather than
// starting one (a button press, /stop, /approve, /deny), so it must not wait
// in the queue behind that turn.
func controlEvent(ev platform.Event) bool {
	switch ev.Kind {
	case platform.EventButton:
		return true
	case platform.EventMessage:
	default:
		return false
	}
	text := strings.TrimSpace(ev.Text)
	if !strings.HasPrefix(text, "/") {
		return false
	}
	head := strings.FieldsFunc(text[1:], func(r rune) bool { return r == ' ' || r == '\n' || r == '@' })
	if len(head) == 0 {
		return false
	}
	switch strings.ToLower(head[0]) {
	case "stop", "approve", "deny":
		return true
	}
	return false
}

// handleDiscordItem runs a queued Discord message; its answers go through
// the owned adapter (the outbox to the owner when this process is not it).
func (g *Gateway) handleDiscordItem(ctx context.Context, it *cluster.Item) error {
	ev, err := platform.UnmarshalEvent(it.Payload)
	if err != nil {
		return err
	}
	ev.Delivery = itemDelivery(it)
	if it.Attempt > 1 {
		g.cluster.log.Info("gateway: a queued Discord message is delivered again; resuming from its last stored step",
			"session_key", it.SessionKey, "message", it.UpdateID, "attempt", it.Attempt)
		done, err := g.resumeItem(ctx, it, &ev)
		if err != nil || done {
			return err
		}
	}
	return g.runner.HandleQueued(ctx, discord.Name, ev)
}

// itemEvent is a queued item's event, for the word that it was given up.
func (g *Gateway) itemEvent(ctx context.Context, it *cluster.Item) (platform.Event, bool) {
	switch {
	case it.Platform == discord.Name:
		ev, err := platform.UnmarshalEvent(it.Payload)
		return ev, err == nil
	case g.cluster.telegram != nil:
		return g.cluster.telegram.Decode(ctx, it.Payload)
	}
	return platform.Event{}, false
}

// directAction is what one process asks of another that holds a
// conversation: a control event to dispatch there.
type directAction struct {
	Op       string          `json:"op"`
	Platform string          `json:"platform"`
	Event    json.RawMessage `json:"event"`
}

const opControl = "control"

// discordControl is the owner's look at each event before the runner gets
// it: a control event of a conversation whose turn runs on another live
// process goes to that process (true); anything else is dispatched here.
func (g *Gateway) discordControl(node *cluster.Node) func(ctx context.Context, ev platform.Event) bool {
	return func(ctx context.Context, ev platform.Event) bool {
		if !controlEvent(ev) || g.runner == nil {
			return false
		}
		key := g.runner.SessionKey(discord.Name, ev)
		holder, ok, err := node.Holder(ctx, key)
		if err != nil {
			g.cluster.log.Warn("gateway: cannot tell which process runs a conversation; handling its control event here", "session_key", key, "error", err)
			return false
		}
		if !ok || holder == node.ID() {
			return false
		}
		b, err := platform.MarshalEvent(ev)
		if err == nil {
			b, err = json.Marshal(directAction{Op: opControl, Platform: discord.Name, Event: b})
		}
		if err == nil {
			err = node.SendTo(ctx, holder, b)
		}
		if err != nil {
			g.cluster.log.Warn("gateway: could not pass a control event to the process running its conversation; handling it here", "session_key", key, "error", err)
			return false
		}
		g.cluster.log.Info("gateway: a control event went to the process running its conversation", "session_key", key, "member", holder, "kind", string(ev.Kind))
		if ev.Ack != nil {
			ev.Ack("") // the press is acknowledged; its outcome shows on the question
		}
		return true
	}
}

// serveDirect dispatches, until ctx ends, the control events other
// processes passed to this one because it runs their conversation's turn.
func (g *Gateway) serveDirect(ctx context.Context, node *cluster.Node) {
	for {
		act, err := node.NextDirect(ctx)
		if err != nil {
			return
		}
		if err := g.performDirect(ctx, act.Payload); err != nil {
			g.cluster.log.Warn("gateway: a control event from another process failed", "error", err)
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := node.Ack(actx, act); err != nil && !errors.Is(err, cluster.ErrLeaseLost) {
			g.cluster.log.Warn("gateway: could not ack a control event", "error", err)
		}
		cancel()
	}
}

func (g *Gateway) performDirect(ctx context.Context, payload []byte) error {
	var a directAction
	if err := json.Unmarshal(payload, &a); err != nil {
		return fmt.Errorf("a direct action that does not decode: %w", err)
	}
	if a.Op != opControl {
		return fmt.Errorf("a direct action of unknown kind %q (a newer hermes in the cluster?)", a.Op)
	}
	ev, err := platform.UnmarshalEvent(a.Event)
	if err != nil {
		return err
	}
	return g.runner.HandleQueued(ctx, a.Platform, ev)
}
