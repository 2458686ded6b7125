package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// The gateway's tables: the session-key index, the delivery ledger, usage.

// BindKey routes key to session id (replacing any earlier binding) and
// records origin.
func (s *Store) BindKey(ctx context.Context, key, id, origin string) error {
	if err := session.CheckKey(key); err != nil {
		return err
	}
	if origin == "" {
		origin = "{}"
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO session_keys (session_key, session_id, origin, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, origin = excluded.origin, updated_at = excluded.updated_at`,
		key, id, origin, ms(s.now()))
	if pgCode(err) == foreignKeyViolation {
		return session.NotFound(id)
	}
	return s.wrap("binding a session key", err)
}

// LookupKey returns the session key routes to; ErrNotFound (wrapped) when none.
func (s *Store) LookupKey(ctx context.Context, key string) (session.KeyEntry, error) {
	e := session.KeyEntry{Key: key}
	err := s.pool.QueryRow(ctx, `SELECT session_id, origin FROM session_keys WHERE session_key = $1`, key).Scan(&e.SessionID, &e.Origin)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, fmt.Errorf("%w for key %q", session.ErrNotFound, key)
	}
	return e, s.wrap("looking up a session key", err)
}

// KeyMessages returns the session key routes to and its messages in order,
// read by one query. ErrNotFound (wrapped) when key routes to no session.
func (s *Store) KeyMessages(ctx context.Context, key string) (string, []llm.Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT k.session_id, m.seq, m.role, m.content, m.name, m.tool_call_id, m.tool_calls
		FROM session_keys k JOIN sessions s ON s.id = k.session_id LEFT JOIN messages m ON m.session_id = k.session_id
		WHERE k.session_key = $1 ORDER BY m.seq`, key)
	if err != nil {
		return "", nil, s.wrap("reading a session key's messages", err)
	}
	defer rows.Close()
	id, found := "", false
	var out []llm.Message
	for rows.Next() {
		var (
			seq                         *int
			role, content, name, callID *string
			calls                       []byte
		)
		if err := rows.Scan(&id, &seq, &role, &content, &name, &callID, &calls); err != nil {
			return "", nil, s.wrap("reading a session key's messages", err)
		}
		found = true
		if seq == nil {
			continue // a session with no messages yet
		}
		m := llm.Message{Role: *role, Content: *content, Name: *name, ToolCallID: *callID}
		if err := decodeCalls(calls, &m); err != nil {
			return "", nil, s.wrap(fmt.Sprintf("message %d of session %s has unreadable tool calls", *seq, id), err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return "", nil, s.wrap("reading a session key's messages", err)
	}
	if !found {
		return "", nil, fmt.Errorf("%w for key %q", session.ErrNotFound, key)
	}
	return id, out, nil
}

// RecordDelivery adds an answer about to be sent and returns its id.
func (s *Store) RecordDelivery(ctx context.Context, d session.Delivery) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `INSERT INTO deliveries (session_key, platform, route, text, created_at, attempts) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		d.SessionKey, d.Platform, d.Route, d.Text, ms(s.now()), d.Attempts).Scan(&id)
	if err != nil {
		return 0, s.wrap("recording a delivery", err)
	}
	return id, nil
}

// DeliveryAttempt counts a send about to begin.
func (s *Store) DeliveryAttempt(ctx context.Context, id int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE deliveries SET attempts = attempts + 1 WHERE id = $1`, id)
	return s.wrap("counting a delivery attempt", err)
}

// Delivered marks answers sent, all in one statement.
func (s *Store) Delivered(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE deliveries SET sent_at = $1 WHERE id = ANY($2)`, ms(s.now()), ids)
	return s.wrap("marking deliveries", err)
}

// DeliverySent says whether answer id was marked sent.
func (s *Store) DeliverySent(ctx context.Context, id int64) (bool, error) {
	var sent bool
	err := s.pool.QueryRow(ctx, `SELECT sent_at IS NOT NULL FROM deliveries WHERE id = $1`, id).Scan(&sent)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return sent, s.wrap("reading the delivery ledger", err)
}

// UnsentDeliveries are the answers of platform recorded since since, never
// marked sent, tried fewer than maxAttempts times, oldest first. Rows older
// than since are deleted.
func (s *Store) UnsentDeliveries(ctx context.Context, platform string, since time.Time, maxAttempts int) ([]session.Delivery, error) {
	if _, err := s.pool.Exec(ctx, `DELETE FROM deliveries WHERE created_at < $1`, ms(since)); err != nil {
		return nil, s.wrap("pruning the delivery ledger", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, session_key, platform, route, text, created_at, attempts FROM deliveries
		WHERE sent_at IS NULL AND platform = $1 AND created_at >= $2 AND attempts < $3 ORDER BY id`, platform, ms(since), maxAttempts)
	if err != nil {
		return nil, s.wrap("reading the delivery ledger", err)
	}
	defer rows.Close()
	var out []session.Delivery
	for rows.Next() {
		var d session.Delivery
		var created int64
		if err := rows.Scan(&d.ID, &d.SessionKey, &d.Platform, &d.Route, &d.Text, &created, &d.Attempts); err != nil {
			return nil, s.wrap("reading the delivery ledger", err)
		}
		d.CreatedAt = fromMS(created)
		out = append(out, d)
	}
	return out, s.wrap("reading the delivery ledger", rows.Err())
}

// RecordUsage stores the usage of a turn of session id.
func (s *Store) RecordUsage(ctx context.Context, id string, u session.TurnUsage) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO turn_usage (session_id, message_seq, model, api_calls, prompt_tokens,
		completion_tokens, total_tokens, cost_usd, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		id, u.MessageSeq, u.Model, u.APICalls, u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CostUSD, ms(s.now()))
	if pgCode(err) == foreignKeyViolation {
		return s.wrap("recording usage", session.NotFound(id))
	}
	return s.wrap("recording usage", err)
}

// Usage is the usage of every turn of session id, oldest first.
func (s *Store) Usage(ctx context.Context, id string) ([]session.TurnUsage, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_seq, model, api_calls, prompt_tokens, completion_tokens,
		total_tokens, cost_usd, created_at FROM turn_usage WHERE session_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, s.wrap("reading usage", err)
	}
	defer rows.Close()
	var out []session.TurnUsage
	for rows.Next() {
		var u session.TurnUsage
		var at int64
		if err := rows.Scan(&u.MessageSeq, &u.Model, &u.APICalls, &u.PromptTokens, &u.CompletionTokens, &u.TotalTokens, &u.CostUSD, &at); err != nil {
			return nil, s.wrap("reading usage", err)
		}
		u.CreatedAt = fromMS(at)
		out = append(out, u)
	}
	return out, s.wrap("reading usage", rows.Err())
}

// ActiveKeys returns the keys whose session, from source, was written to at
// or after since, the most recently active first, at most limit.
func (s *Store) ActiveKeys(ctx context.Context, source string, since time.Time, limit int) ([]session.KeyEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT k.session_key, k.session_id, k.origin FROM session_keys k JOIN sessions s ON s.id = k.session_id
		WHERE s.source = $1 AND s.updated_at >= $2 ORDER BY s.updated_at DESC, k.session_key LIMIT $3`, source, ms(since), max(limit, 0))
	if err != nil {
		return nil, s.wrap("listing active session keys", err)
	}
	defer rows.Close()
	var out []session.KeyEntry
	for rows.Next() {
		var e session.KeyEntry
		if err := rows.Scan(&e.Key, &e.SessionID, &e.Origin); err != nil {
			return nil, s.wrap("listing active session keys", err)
		}
		out = append(out, e)
	}
	return out, s.wrap("listing active session keys", rows.Err())
}
