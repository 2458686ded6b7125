package gateway

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// Routes finds where a session key's conversation lives (state.db).
type Routes interface {
	// Route returns key's session id and the Source its conversation came
	// from; found is false when key names no session or none with a stored
	// route.
	Route(ctx context.Context, key string) (sessionID string, src platform.Source, found bool, err error)
}

// Inject is ctx.inject_message's gateway mode (wave2 §2.11): text from
// plugin pluginID becomes a message in the existing session of key, as if
// its user had written it, and the answer goes to that conversation. The
// route is the stored one, judged again by the current rules with no
// adapter-time trust; the text is conversational only (it never runs a
// command or answers an approval) and waits its turn when the session is
// busy. It returns whether the message was accepted; why not is logged.
func (r *Runner) Inject(ctx context.Context, pluginID, key, text string) bool {
	notRouted := func(why string) bool {
		r.log.Info(fmt.Sprintf("Plugin message injection was not routed: plugin=%s session=%s", pluginID, key), "reason", why)
		return false
	}
	r.mu.Lock()
	draining := r.draining
	r.mu.Unlock()
	if draining {
		return notRouted("the gateway is stopping")
	}
	if r.o.Routes == nil {
		return notRouted("no session store")
	}
	id, src, found, err := r.o.Routes.Route(ctx, key)
	if err != nil {
		r.log.Warn(fmt.Sprintf("Plugin message injection failed: plugin=%s session=%s", pluginID, key), "error", err)
		return false
	}
	if !found {
		return notRouted("no session has that key")
	}
	src.RoleAuthorized = false // CheckInjected ignores it; a stored grant is no grant
	d := r.o.Auth.CheckInjected(src)
	if d.Problem != nil {
		r.log.Warn("gateway: authorisation read a file it could not use", "error", d.Problem)
	}
	if !d.Allowed {
		// Upstream's text less its colon: "authorization: <token>" is what the
		// log's secret masking hides, and it would hide the plugin's name.
		r.log.Warn("Plugin message injection denied by current gateway authorization", "plugin", pluginID, "session", key)
		return false
	}
	a, ok := r.adapters[src.Platform]
	if !ok {
		return notRouted("no " + src.Platform + " adapter runs")
	}
	// Route pinning: the stored route must still lead to this key (it would
	// not after group_sessions_per_user changed, say); the message must not
	// land in a conversation the plugin did not name.
	if platform.SessionKey(src, r.o.Keys) != key {
		return notRouted("the stored route no longer maps to that key")
	}
	ev := platform.Event{Kind: platform.EventMessage, Source: src, Text: text}
	if !r.enqueue(a, key, ev, false) {
		return notRouted("the gateway is stopping")
	}
	r.log.Info(fmt.Sprintf("Plugin message injection dispatched: plugin=%s session=%s session_id=%s", pluginID, key, id))
	return true
}
