package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// Roles elected for the connections only one process may hold: Discord's
// gateway websocket (a second IDENTIFY would end the first) and Telegram's
// getUpdates (a second poller gets 409 Conflict).
const (
	roleDiscord      = "discord"
	roleTelegramPoll = "telegram-poll"
)

// withPassword puts pw into a URL that carries none (the store's own rule:
// the URL's password wins).
func withPassword(raw, pw string) string {
	if pw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		return raw
	}
	user := ""
	if u.User != nil {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, pw)
	return u.String()
}

// ownedAdapter is a connection one process of the cluster holds at a time.
// Every process runs one; the one that wins role's election connects the
// inner adapter and performs, from the outbox, what the others asked of the
// platform. Elsewhere its actions go to the outbox.
type ownedAdapter struct {
	inner platform.Adapter
	role  string
	node  *cluster.Node
	log   *slog.Logger
	// leading: the inner connection is this process's to use.
	leading atomic.Bool
	// inject performs an injection on the owner (the runner's Inject);
	// redeliver sends what the ledger owes the platform's chats.
	injectMu  sync.Mutex
	inject    func(ctx context.Context, pluginID, key, text string) bool
	redeliver func(platform.Adapter)
	// ledger marks routed answers delivered once sent here (nil: no
	// ledger); sends are the ledger answers in hand or sent moments ago.
	ledger ownerLedger
	sends  recentSends
	// gained runs when leadership is won, before the connection is made
	// (the Discord catch-up's cursor); nil: nothing.
	gained func(ctx context.Context)
	// control sees each event of the connection before the runner does:
	// true when it took it (a control event passed to the process running
	// its conversation); nil: none.
	control func(ctx context.Context, ev platform.Event) bool
}

var (
	_ platform.Adapter         = (*ownedAdapter)(nil)
	_ platform.ReactionAdder   = (*ownedAdapter)(nil)
	_ platform.ThreadRenamer   = (*ownedAdapter)(nil)
	_ gateway.RedeliversOnLead = (*ownedAdapter)(nil)
	_ gateway.DeferredDelivery = (*ownedAdapter)(nil)
)

// RedeliversOnLead: the process that gains the connection sends what the
// ledger owes (a dead owner's answers too), not every process at its start.
func (o *ownedAdapter) RedeliversOnLead() {}

// ownerActionFresh bounds how old a typing signal may be and still be shown:
// one that waited out a takeover is over.
const ownerActionFresh = 10 * time.Second

func (o *ownedAdapter) Name() string { return o.inner.Name() }

// Connected: the owner's connection is up, or, elsewhere, the database that
// carries actions to the owner answers.
func (o *ownedAdapter) Connected() bool {
	if o.leading.Load() {
		return o.inner.Connected()
	}
	return o.node.Fresh()
}

func (o *ownedAdapter) setRunner(inject func(ctx context.Context, pluginID, key, text string) bool, redeliver func(platform.Adapter)) {
	o.injectMu.Lock()
	o.inject, o.redeliver = inject, redeliver
	o.injectMu.Unlock()
}

// Run campaigns for the role until ctx ends: while this process leads, the
// inner adapter runs and the outbox is served; when leadership is lost the
// connection closes at once. A fatal error of the inner adapter (a refused
// token) ends Run, as it would without a cluster.
func (o *ownedAdapter) Run(ctx context.Context, h platform.Handler) error {
	fatal := make(chan error, 1)
	el := o.node.Elect(ctx, o.role, func(lctx context.Context) {
		if o.gained != nil {
			o.gained(lctx)
		}
		// A predecessor whose database session was cut has not noticed yet:
		// it disconnects within the loss window, so two never connect at once.
		t := time.NewTimer(o.node.LossWindow())
		select {
		case <-lctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		o.log.Info("gateway: this process now owns the connection", "platform", o.Name(), "role", o.role)
		o.leading.Store(true)
		var served sync.WaitGroup
		served.Add(1)
		go func() { defer served.Done(); o.serveOutbox(lctx) }()
		o.injectMu.Lock()
		redeliver := o.redeliver
		o.injectMu.Unlock()
		if redeliver != nil {
			served.Add(1)
			go func() { defer served.Done(); redeliver(o) }()
		}
		err := o.inner.Run(lctx, o.handler(h))
		o.leading.Store(false)
		if err != nil && lctx.Err() == nil {
			select {
			case fatal <- err:
			default:
			}
		}
		served.Wait()
		o.log.Info("gateway: this process no longer owns the connection", "platform", o.Name(), "role", o.role)
	})
	defer el.Stop()
	select {
	case <-ctx.Done():
		return nil
	case err := <-fatal:
		return err
	}
}

// handler is h behind the control option.
func (o *ownedAdapter) handler(h platform.Handler) platform.Handler {
	if o.control == nil {
		return h
	}
	return func(ctx context.Context, ev platform.Event) {
		if !o.control(ctx, ev) {
			h(ctx, ev)
		}
	}
}

// serveOutbox performs the actions other processes queued for the role,
// each acked once performed: one claimed by an owner that died before its
// ack is claimed again after the lease expiry (performed at least once).
func (o *ownedAdapter) serveOutbox(lctx context.Context) {
	for {
		act, err := o.node.NextAction(lctx, o.role)
		if err != nil {
			return
		}
		// Performed to the end even if leadership goes meanwhile: the
		// platform call is short, and half of one helps nobody.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(lctx), 30*time.Second)
		retry, perr := o.perform(pctx, act)
		cancel()
		o.log.Debug("gateway: performed a routed action", "platform", o.Name(), "action", act.ID, "attempt", act.Attempt)
		if perr != nil && retry && act.Attempt < routedAttempts {
			// Not acked: tried again (here or by the next owner) once the claim expires.
			o.log.Warn("gateway: a routed send failed; it is tried again after its claim expires", "platform", o.Name(), "action", act.ID, "attempt", act.Attempt, "error", perr)
			continue
		}
		if perr != nil {
			o.log.Warn("gateway: an action routed from another process failed", "platform", o.Name(), "action", act.ID, "attempt", act.Attempt, "error", perr)
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(lctx), 5*time.Second)
		aerr := o.node.Ack(actx, act)
		cancel()
		if aerr != nil && !errors.Is(aerr, cluster.ErrLeaseLost) {
			o.log.Warn("gateway: could not ack a routed action", "platform", o.Name(), "action", act.ID, "error", aerr)
		}
	}
}

// route queues a for the owner.
func (o *ownedAdapter) route(ctx context.Context, a ownerAction) error {
	b, err := a.encode()
	if err != nil {
		return err
	}
	if err := o.node.Send(ctx, o.role, b); err != nil {
		return fmt.Errorf("%s: routing %s to the process that owns the connection: %w", o.Name(), a.Op, err)
	}
	return nil
}

// Send: the answer's message id is the owner's to know; a routed send
// reports none (an edit of it is then skipped, as for a platform without
// message ids).
func (o *ownedAdapter) Send(ctx context.Context, msg platform.Outbound) (platform.SendResult, error) {
	if o.leading.Load() {
		return o.inner.Send(ctx, msg)
	}
	return platform.SendResult{}, o.route(ctx, ownerAction{Op: opSend, Out: &msg})
}

func (o *ownedAdapter) Edit(ctx context.Context, chatID, messageID, text string) error {
	if o.leading.Load() {
		return o.inner.Edit(ctx, chatID, messageID, text)
	}
	return o.route(ctx, ownerAction{Op: opEdit, ChatID: chatID, MessageID: messageID, Text: text})
}

func (o *ownedAdapter) Typing(ctx context.Context, chatID, threadID string) error {
	if o.leading.Load() {
		return o.inner.Typing(ctx, chatID, threadID)
	}
	return o.route(ctx, ownerAction{Op: opTyping, ChatID: chatID, ThreadID: threadID, At: clock.Now()})
}

func (o *ownedAdapter) AddReaction(ctx context.Context, chatID, messageID, emoji string) error {
	r, ok := o.inner.(platform.ReactionAdder)
	if !ok {
		return &platform.InvalidArgumentError{Reason: o.Name() + " has no reactions"}
	}
	if o.leading.Load() {
		return r.AddReaction(ctx, chatID, messageID, emoji)
	}
	return o.route(ctx, ownerAction{Op: opReaction, ChatID: chatID, MessageID: messageID, Emoji: emoji})
}

func (o *ownedAdapter) SetThreadTitle(ctx context.Context, chatID, threadID, title string) error {
	r, ok := o.inner.(platform.ThreadRenamer)
	if !ok {
		return &platform.InvalidArgumentError{Reason: o.Name() + " has no thread titles"}
	}
	if o.leading.Load() {
		return r.SetThreadTitle(ctx, chatID, threadID, title)
	}
	return o.route(ctx, ownerAction{Op: opTitle, ChatID: chatID, ThreadID: threadID, Title: title})
}

// Inject routes ctx.inject_message to the owner when this process is not
// it: the owner's runner judges and queues it as for its own plugins.
// routed is false when this process owns the connection (inject locally).
func (o *ownedAdapter) Inject(ctx context.Context, pluginID, key, text string) (routed bool, err error) {
	if o.leading.Load() {
		return false, nil
	}
	return true, o.route(ctx, ownerAction{Op: opInject, Plugin: pluginID, Key: key, Text: text})
}
