package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/hooks"
)

// The gateway's own hooks: gateway_ready, gateway_platform_event and the
// payload pre_gateway_dispatch sees.

// readyWait bounds how long gateway_ready waits for every platform to
// connect; past it, the hook fires with those that did.
const readyWait = 30 * time.Second

// ready fires gateway_ready once the platforms connected (upstream: after
// the adapters' connect), or readyWait passed. Plugins get names and
// states, not the adapters: those live in this process.
func (r *Runner) ready(ctx context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	deadline := time.NewTimer(readyWait)
	defer deadline.Stop()
wait:
	for {
		all := true
		for _, a := range r.o.Adapters {
			all = all && a.Connected()
		}
		if all {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			break wait
		case <-t.C:
		}
	}
	adapters := map[string]any{}
	for _, a := range r.o.Adapters {
		adapters[a.Name()] = map[string]any{"connected": a.Connected()}
	}
	r.log.Info("gateway: ready", "platforms", strings.Join(r.platformNames(), ","))
	r.o.Hooks.Fire(ctx, hooks.HookGatewayReady, map[string]any{"gateway": map[string]any{"platforms": r.platformNames()}, "adapters": adapters})
}

// platformEvent fires gateway_platform_event for an authorised
// non-message event (edits, deletes, threads).
func (r *Runner) platformEvent(ctx context.Context, ev platform.Event) {
	if r.o.Hooks == nil || !r.o.Hooks.Has(hooks.HookGatewayPlatformEvent) {
		return
	}
	r.o.Hooks.Fire(ctx, hooks.HookGatewayPlatformEvent, map[string]any{"platform": ev.Source.Platform, "event_type": string(ev.Kind), "payload": eventPayload(ev)})
}

// eventPayload is a platform event's payload as upstream shapes it per
// event type (ids as strings, None when missing).
func eventPayload(ev platform.Event) map[string]any {
	s := ev.Source
	var payload map[string]any
	switch ev.Kind {
	case platform.EventThreadCreated:
		payload = map[string]any{"thread_id": nilIfEmpty(s.ThreadID), "parent_chat_id": nilIfEmpty(s.ChatID), "name": ev.Text, "owner_id": nilIfEmpty(s.UserID)}
	case platform.EventThreadRenamed:
		payload = map[string]any{"thread_id": nilIfEmpty(s.ThreadID), "parent_chat_id": nilIfEmpty(s.ChatID), "old_name": nil, "new_name": ev.Text}
	default:
		payload = map[string]any{"chat_id": s.ChatID, "message_id": nilIfEmpty(ev.MessageID), "thread_id": nilIfEmpty(s.ThreadID)}
	}
	switch ev.Kind {
	case platform.EventEdited:
		payload["text"] = ev.Text
		payload["edited_at"] = ev.Time.Unix()
	case platform.EventDeleted:
		payload["author_id"] = nil
	case platform.EventReaction:
		payload["emojis"], payload["custom_emoji_ids"] = []any{}, []any{}
	}
	for k, v := range ev.Payload {
		payload[k] = v
	}
	return payload
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// eventMap is a message event as pre_gateway_dispatch sees it.
func eventMap(ev platform.Event) map[string]any {
	s := ev.Source
	return map[string]any{"text": ev.Text, "message_type": "text", "message_id": nilIfEmpty(ev.MessageID),
		"reply_to_message_id": nilIfEmpty(ev.ReplyTo), "internal": false,
		"source": map[string]any{"platform": s.Platform, "chat_id": s.ChatID, "chat_name": s.ChatName, "chat_type": s.ChatType,
			"user_id": s.UserID, "user_name": s.UserName, "thread_id": nilIfEmpty(s.ThreadID)}}
}

// gatewayDirective reads pre_gateway_dispatch's results: the first dict with
// a known action wins; skip gives its reason (never ""), rewrite the new text.
func gatewayDirective(results []any) (skip string, text *string) {
	for _, res := range results {
		m, ok := res.(map[string]any)
		if !ok {
			continue
		}
		action, _ := m["action"].(string)
		switch strings.ToLower(action) {
		case "skip":
			reason, _ := m["reason"].(string)
			if reason == "" {
				reason = "skipped by a plugin"
			}
			return reason, nil
		case "rewrite":
			if t, ok := m["text"].(string); ok {
				return "", &t
			}
		case "allow":
			return "", nil
		}
	}
	return "", nil
}
