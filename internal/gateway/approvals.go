package gateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// Approval choices, as upstream names them.
const (
	ChoiceOnce    = "once"
	ChoiceSession = "session"
	ChoiceAlways  = "always"
	ChoiceDeny    = "deny"
)

// Question is an approval asked in a chat.
type Question struct {
	Command     string // shown in a code block; the caller has made it safe to show
	Description string
	OfferAlways bool // a plugin's request is never offered "always"
}

// pendingApproval is one question waiting for its answer.
type pendingApproval struct {
	id        string
	key       string
	chatID    string
	messageID string
	answer    chan string // buffered 1
}

var approvalSeq atomic.Int64

const buttonPrefix = "hermes-approve:"

// Ask puts q in the chat of key (route src) and waits for /approve,
// /approve session|always, /deny or a button. Questions of one session are
// answered in the order asked (FIFO). When ctx ends first (the approval
// timeout, the turn stopped), the question is withdrawn and ctx's error
// returned.
func (r *Runner) Ask(ctx context.Context, key string, src platform.Source, q Question) (string, error) {
	a, ok := r.adapters[src.Platform]
	if !ok {
		return ChoiceDeny, fmt.Errorf("no %s adapter to ask on", src.Platform)
	}
	p := &pendingApproval{id: strconv.FormatInt(approvalSeq.Add(1), 36), key: key, chatID: src.ChatID, answer: make(chan string, 1)}
	text := "⚠️ Approval needed: " + q.Description + "\n```\n" + q.Command + "\n```\n" +
		"Reply /approve (once), /approve session"
	buttons := []platform.Button{{Label: "Approve once", Data: buttonPrefix + p.id + ":" + ChoiceOnce},
		{Label: "This session", Data: buttonPrefix + p.id + ":" + ChoiceSession}}
	if q.OfferAlways {
		text += ", /approve always"
		buttons = append(buttons, platform.Button{Label: "Always", Data: buttonPrefix + p.id + ":" + ChoiceAlways})
	}
	text += " or /deny."
	buttons = append(buttons, platform.Button{Label: "Deny", Data: buttonPrefix + p.id + ":" + ChoiceDeny})

	r.mu.Lock()
	r.approvals[key] = append(r.approvals[key], p)
	r.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	res, err := a.Send(sctx, platform.Outbound{ChatID: src.ChatID, ThreadID: src.ThreadID, Text: text, Buttons: buttons})
	cancel()
	if err != nil {
		r.withdraw(p)
		return ChoiceDeny, fmt.Errorf("asking for approval in the chat: %w", err)
	}
	r.mu.Lock()
	p.messageID = res.MessageID
	r.mu.Unlock()
	select {
	case choice := <-p.answer:
		r.outcome(a, p, choice)
		return choice, nil
	case <-ctx.Done():
		if r.withdraw(p) {
			r.outcome(a, p, "")
			return ChoiceDeny, ctx.Err()
		}
		choice := <-p.answer // answered as ctx ended: the answer stands
		r.outcome(a, p, choice)
		return choice, nil
	}
}

// withdraw removes p from its queue; false when it was already answered.
func (r *Runner) withdraw(p *pendingApproval) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.approvals[p.key]
	for i, x := range q {
		if x == p {
			r.approvals[p.key] = append(q[:i:i], q[i+1:]...)
			if len(r.approvals[p.key]) == 0 {
				delete(r.approvals, p.key)
			}
			return true
		}
	}
	return false
}

// answer resolves the oldest question of key, or the one with id; false
// when there is none.
func (r *Runner) answer(key, id, choice string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.approvals[key]
	for i, p := range q {
		if id != "" && p.id != id {
			continue
		}
		r.approvals[key] = append(q[:i:i], q[i+1:]...)
		if len(r.approvals[key]) == 0 {
			delete(r.approvals, key)
		}
		p.answer <- choice
		return true
	}
	return false
}

// outcome shows on the question what became of it ("" for withdrawn).
func (r *Runner) outcome(a platform.Adapter, p *pendingApproval, choice string) {
	if p.messageID == "" {
		return
	}
	text := map[string]string{ChoiceOnce: "✅ Approved once.", ChoiceSession: "✅ Approved for this session.",
		ChoiceAlways: "✅ Approved always.", ChoiceDeny: "❌ Denied.", "": "⌛ No answer: denied."}[choice]
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	if err := a.Edit(ctx, p.chatID, p.messageID, text); err != nil {
		r.log.Debug("gateway: could not mark the approval answered", "error", err)
	}
}

// approveCommand is /approve [session|always] and /deny.
func (r *Runner) approveCommand(key, name, args string) string {
	choice := ChoiceDeny
	if name == "approve" {
		switch strings.ToLower(strings.TrimSpace(args)) {
		case "", "once":
			choice = ChoiceOnce
		case "session":
			choice = ChoiceSession
		case "always":
			choice = ChoiceAlways
		default:
			return "Use /approve, /approve session or /approve always."
		}
	}
	if !r.answer(key, "", choice) {
		return "No command is waiting for approval."
	}
	return "" // the question itself shows the outcome
}

// button handles an inline button press: an approval answer.
func (r *Runner) button(ev platform.Event) {
	rest, ok := strings.CutPrefix(ev.Data, buttonPrefix)
	id, choice, ok2 := strings.Cut(rest, ":")
	text := ""
	switch {
	case !ok || !ok2:
		text = "Unknown button."
	case choice != ChoiceOnce && choice != ChoiceSession && choice != ChoiceAlways && choice != ChoiceDeny:
		text = "Unknown choice."
	case !r.answer(platform.SessionKey(ev.Source, r.o.Keys), id, choice):
		text = "This question is no longer open."
	}
	if ev.Ack != nil {
		ev.Ack(text)
	}
}
