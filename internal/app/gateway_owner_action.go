package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/session"
)

// Operations of a routed action.
const (
	opSend     = "send"
	opEdit     = "edit"
	opTyping   = "typing"
	opReaction = "reaction"
	opTitle    = "title"
	opInject   = "inject"
)

// ownerAction is one platform call a process without the connection asks
// of its owner, as the outbox carries it (JSON).
type ownerAction struct {
	Op        string             `json:"op"`
	Out       *platform.Outbound `json:"out,omitempty"`
	ChatID    string             `json:"chat_id,omitempty"`
	ThreadID  string             `json:"thread_id,omitempty"`
	MessageID string             `json:"message_id,omitempty"`
	Text      string             `json:"text,omitempty"`
	Emoji     string             `json:"emoji,omitempty"`
	Title     string             `json:"title,omitempty"`
	Plugin    string             `json:"plugin,omitempty"`
	Key       string             `json:"key,omitempty"`
	// Ledger is a routed answer's delivery ledger id: the owner marks it
	// delivered once the platform took it (0: not recorded).
	Ledger int64     `json:"ledger,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

func (a ownerAction) encode() ([]byte, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encoding a routed %s: %w", a.Op, err)
	}
	return b, nil
}

// routedAttempts bounds the tries of a routed send the platform refused for
// now (rate limit, 5xx): each after the previous claim expired.
const routedAttempts = 3

// perform does one routed action on the inner (connected) adapter; retry:
// the platform said to try again later.
func (o *ownedAdapter) perform(ctx context.Context, act *cluster.Action) (retry bool, err error) {
	err = o.performOnce(ctx, act, &retry)
	return retry, err
}

func (o *ownedAdapter) performOnce(ctx context.Context, act *cluster.Action, retry *bool) error {
	var a ownerAction
	if err := json.Unmarshal(act.Payload, &a); err != nil {
		return fmt.Errorf("a routed action that does not decode: %w", err)
	}
	switch a.Op {
	case opSend:
		if a.Out == nil {
			return errors.New("a routed send without a message")
		}
		if a.Ledger != 0 {
			return o.performRecorded(ctx, a.Ledger, *a.Out, retry)
		}
		res, err := o.inner.Send(ctx, *a.Out)
		*retry = err != nil && res.Retryable
		return err
	case opEdit:
		return o.inner.Edit(ctx, a.ChatID, a.MessageID, a.Text)
	case opTyping:
		if clock.Now().Sub(a.At) > ownerActionFresh {
			return nil
		}
		return o.inner.Typing(ctx, a.ChatID, a.ThreadID)
	case opReaction:
		r, ok := o.inner.(platform.ReactionAdder)
		if !ok {
			return fmt.Errorf("%s has no reactions", o.Name())
		}
		return r.AddReaction(ctx, a.ChatID, a.MessageID, a.Emoji)
	case opTitle:
		r, ok := o.inner.(platform.ThreadRenamer)
		if !ok {
			return fmt.Errorf("%s has no thread titles", o.Name())
		}
		return r.SetThreadTitle(ctx, a.ChatID, a.ThreadID, a.Title)
	case opInject:
		o.injectMu.Lock()
		inject := o.inject
		o.injectMu.Unlock()
		if inject == nil {
			return errors.New("a routed injection reached a process whose gateway is not serving")
		}
		inject(ctx, a.Plugin, a.Key, a.Text) // judged and logged by the runner
		return nil
	}
	return fmt.Errorf("a routed action of unknown kind %q (a newer hermes in the cluster?)", a.Op)
}

// gatewayOwners are a gateway's owned connections, by platform.
type gatewayOwners struct {
	node   *cluster.Node
	owned  map[string]*ownedAdapter
	routes func(ctx context.Context, key string) (platform.Source, bool, error)
	// catchUp reads Discord back after a takeover (nil: off).
	catchUp *discordCatchUp
	// accept queues accepted Discord messages; control passes control
	// events to the process running their conversation.
	accept  func(ctx context.Context, ev platform.Event) (discord.Acceptance, error)
	control func(ctx context.Context, ev platform.Event) bool
}

// wrap puts the adapters that cannot be shared behind an election; the
// others (webhook Telegram, plugin platforms) are returned as they are.
func (w *gatewayOwners) wrap(g *Gateway, adapters []platform.Adapter, polling bool) []platform.Adapter {
	if w == nil {
		return adapters
	}
	out := make([]platform.Adapter, 0, len(adapters))
	for _, a := range adapters {
		role := ""
		switch {
		case a.Name() == roleDiscord:
			role = roleDiscord
		case a.Name() == "telegram" && polling:
			role = roleTelegramPoll
		}
		if role == "" {
			out = append(out, a)
			continue
		}
		o := &ownedAdapter{inner: a, role: role, node: w.node, log: g.log.logger}
		if role == roleDiscord && w.catchUp != nil {
			o.gained = w.catchUp.gained
		}
		if role == roleDiscord {
			o.control = w.control
		}
		w.owned[a.Name()] = o
		out = append(out, o)
	}
	return out
}

// discordOptions gives the Discord adapter of a cluster the work queue and
// the catch-up: every message this process accepts is queued, its id
// recorded in cluster_seen in the same statement, so a message the previous
// owner took and the catch-up reads again is not answered twice. Control
// events are not queued (see discordAccept): they are deduped by Seen.
func (w *gatewayOwners) discordOptions(o *discord.Options) {
	if w == nil {
		return
	}
	node := w.node
	o.Seen = func(ctx context.Context, id string) (bool, error) { return node.MarkSeen(ctx, discord.Name, id) }
	o.Accept = w.accept
	if w.catchUp != nil {
		o.CatchUp = w.catchUp.plan
	}
}

// inject routes ctx.inject_message to the owner of the key's platform when
// that is another process. handled is false when it is to be injected here.
func (w *gatewayOwners) inject(ctx context.Context, pluginID, key, text string) (handled, ok bool) {
	if w == nil || len(w.owned) == 0 {
		return false, false
	}
	src, found, err := w.routes(ctx, key)
	if err != nil || !found {
		return false, false // the runner says why, as without a cluster
	}
	o, owned := w.owned[src.Platform]
	if !owned {
		return false, false
	}
	routed, err := o.Inject(ctx, pluginID, key, text)
	if !routed {
		return false, false
	}
	if err != nil {
		o.log.Warn(fmt.Sprintf("Plugin message injection failed: plugin=%s session=%s", pluginID, key), "error", err)
		return true, false
	}
	o.log.Info(fmt.Sprintf("Plugin message injection routed to the process that owns %s: plugin=%s session=%s", src.Platform, pluginID, key))
	return true, true
}

func (w *gatewayOwners) setRunner(r *gateway.Runner) {
	if w == nil {
		return
	}
	for _, o := range w.owned {
		o.setRunner(r.Inject, r.Redeliver)
	}
}

func (w *gatewayOwners) close() {
	if w != nil && w.node != nil {
		w.node.Close()
	}
}

// openOwners joins the cluster when gateway.store is PostgreSQL; nil (no
// election, every connection local) with state.db.
func (g *Gateway) openOwners(ctx context.Context) (*gatewayOwners, error) {
	n, err := g.openCluster(ctx)
	if err != nil {
		// The database may be back in a moment: a restart, not a fix, is due.
		return nil, &ExitError{Code: ExitGatewayRestart, Message: "Error: " + err.Error() + " (exit 75: restart the gateway)"}
	}
	if n == nil {
		return nil, nil
	}
	w := &gatewayOwners{node: n, owned: map[string]*ownedAdapter{}, accept: g.discordAccept(n), control: g.discordControl(n)}
	w.routes = func(ctx context.Context, key string) (platform.Source, bool, error) {
		if g.engine == nil {
			return platform.Source{}, false, nil
		}
		_, src, found, err := g.engine.Route(ctx, key)
		return src, found, err
	}
	if window := g.cluster.discordCatchUp; window > 0 {
		w.catchUp = &discordCatchUp{window: window, node: n, electRetry: n.ElectRetry(), log: g.log.logger,
			keys: func(ctx context.Context, since time.Time) ([]session.KeyEntry, error) {
				if g.engine == nil {
					return nil, nil
				}
				// Several keys share a channel (sessions per user): read more.
				return g.engine.store.ActiveKeys(ctx, discord.Name, since, 4*catchUpChannels)
			}}
	}
	return w, nil
}
