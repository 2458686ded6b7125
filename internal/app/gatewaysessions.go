package app

// The gateway's session lifecycle beyond a turn: a compaction's child
// session takes over the key, and a session dropped from memory (evicted
// when idle, or at shutdown) ends for the memory provider.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/gateway"
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

// AppendTurnMessage stores a turn's own user message with the queue
// delivery it answers (none outside a cluster's queued turn).
func (r gatewayRecorder) AppendTurnMessage(ctx context.Context, id string, m llm.Message) error {
	_, err := r.s.AppendFrom(ctx, id, m, gateway.TurnDeliveryFrom(ctx).ID)
	return err
}

// run runs key's turn on gs: a queued delivery whose user message is stored
// already (gateway.TurnDelivery.Stored) continues from it, the rest is
// agent.Run of text.
func (e *gatewayEngine) run(ctx context.Context, ag *agent.Agent, key string, gs *gwSession, text string) (*agent.Turn, error) {
	d := gateway.TurnDeliveryFrom(ctx)
	if !d.Stored {
		return ag.Run(ctx, gs.s, text)
	}
	st, err := findTurn(ctx, e.store, key, d.ID)
	if err != nil {
		return nil, err
	}
	if !st.stored {
		// Gone since the queue looked (an /undo elsewhere): the item is
		// given back and its next delivery runs as a first one.
		return nil, fmt.Errorf("the stored message of %s to continue from is gone", d.ID)
	}
	// The resume's repair only inserts tool answers, so the message is at
	// st.at or after it: the first user message from there.
	for i := st.at; i < len(gs.s.Messages); i++ {
		if gs.s.Messages[i].Role == llm.RoleUser {
			return ag.RunStored(ctx, gs.s, i)
		}
	}
	return nil, fmt.Errorf("the stored message of %s is not in the session's history", d.ID)
}
