package app

// The gateway's session lifecycle beyond a turn: a compaction's child
// session takes over the key, and a session dropped from memory (evicted
// when idle, or at shutdown) ends for the memory provider.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
)

// gatewayEndTimeout bounds telling the memory provider, at shutdown, that
// every live session ended: a hung provider cannot hold the stop.
const gatewayEndTimeout = 15 * time.Second

// gatewayRecorder is the gateway's session store: chat's, with the key index
// following a compaction, so the key routes to the child session (the
// next message, after an eviction or a restart, continues the compacted
// transcript) as chat's session chain does.
type gatewayRecorder struct{ sessionRecorder }

func (r gatewayRecorder) ForkSession(ctx context.Context, parent string) (string, error) {
	id, err := r.sessionRecorder.ForkSession(ctx, parent)
	if err != nil {
		return "", err
	}
	turn, _ := ctx.Value(gatewayTurnKey{}).(gatewayTurn)
	if turn.key == "" {
		return id, nil
	}
	origin := ""
	if k, lerr := r.s.LookupKey(ctx, turn.key); lerr == nil {
		if k.SessionID != parent {
			return id, nil // the key moved on (a /new meanwhile): leave it
		}
		origin = k.Origin
	} else if b, merr := json.Marshal(turn.src); merr == nil {
		origin = string(b)
	}
	if err := r.s.BindKey(ctx, turn.key, id, origin); err != nil {
		return "", err
	}
	return id, nil
}

// endEvicted tells the memory provider the evicted sessions ended, in the
// background (the turn that evicted them is not held up); close waits.
func (e *gatewayEngine) endEvicted(gone []*agent.Session) {
	if len(gone) == 0 || e.h.memory.External() == nil {
		return
	}
	e.ending.Add(1)
	go func() {
		defer e.ending.Done()
		for _, s := range gone {
			e.h.memory.SessionEnd(context.Background(), s.ID, messagesForMemory(s.Messages))
		}
	}()
}

// endAll is shutdown's on_session_end for every live session, bounded by
// gatewayEndTimeout in all; a session whose turn is still running (past the
// drain) is skipped.
func (e *gatewayEngine) endAll() {
	if e.h.memory.External() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), gatewayEndTimeout)
	defer cancel()
	done := make(chan struct{})
	go func() { e.ending.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return
	}
	e.mu.Lock()
	live := make([]*gwSession, 0, len(e.sessions))
	for _, gs := range e.sessions {
		live = append(live, gs)
	}
	e.mu.Unlock()
	for _, gs := range live {
		if ctx.Err() != nil {
			e.h.f.Logger().Warn("gateway: memory provider: not every session was ended within the shutdown bound", "bound", gatewayEndTimeout)
			return
		}
		if !gs.mu.TryLock() {
			continue
		}
		s := gs.s
		var msgs []llm.Message
		if s != nil {
			msgs = s.Messages
		}
		gs.mu.Unlock()
		if s != nil {
			e.h.memory.SessionEnd(ctx, s.ID, messagesForMemory(msgs))
		}
	}
}
