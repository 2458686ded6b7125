package session

import (
	"context"
	"database/sql"
	"time"
)

// TurnUsage is the token usage of one turn.
type TurnUsage struct {
	// MessageSeq is the seq of the turn's user message.
	MessageSeq       int       `json:"message_seq"`
	Model            string    `json:"model"`
	APICalls         int       `json:"api_calls"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	TotalTokens      int       `json:"total_tokens"`
	CostUSD          *float64  `json:"cost_usd"` // nil: the model's price is not configured
	CreatedAt        time.Time `json:"created_at"`
}

// RecordUsage stores the usage of a turn of session id.
func (s *Store) RecordUsage(ctx context.Context, id string, u TurnUsage) error {
	var cost any
	if u.CostUSD != nil {
		cost = *u.CostUSD
	}
	// Through the group commit: a direct write would contend for the lock with it.
	_, err := s.exec(ctx, `INSERT INTO turn_usage (session_id, message_seq, model, api_calls, prompt_tokens,
		completion_tokens, total_tokens, cost_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, u.MessageSeq, u.Model, u.APICalls, u.PromptTokens, u.CompletionTokens, u.TotalTokens, cost, ms(s.now()))
	return s.wrap("recording usage", err)
}

// Usage is the usage of every turn of session id, oldest first.
func (s *Store) Usage(ctx context.Context, id string) ([]TurnUsage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT message_seq, model, api_calls, prompt_tokens, completion_tokens,
		total_tokens, cost_usd, created_at FROM turn_usage WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, s.wrap("reading usage", err)
	}
	defer rows.Close()
	var out []TurnUsage
	for rows.Next() {
		var u TurnUsage
		var cost sql.NullFloat64
		var at int64
		if err := rows.Scan(&u.MessageSeq, &u.Model, &u.APICalls, &u.PromptTokens, &u.CompletionTokens, &u.TotalTokens, &cost, &at); err != nil {
			return nil, s.wrap("reading usage", err)
		}
		if cost.Valid {
			c := cost.Float64
			u.CostUSD = &c
		}
		u.CreatedAt = fromMS(at)
		out = append(out, u)
	}
	return out, s.wrap("reading usage", rows.Err())
}

// TruncateFrom drops the messages of session id from seq on, with their tool
// calls and turn usage: /undo of the last exchange.
func (s *Store) TruncateFrom(ctx context.Context, id string, seq int) error {
	return s.wrap("dropping messages", s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM messages WHERE session_id = ? AND seq >= ?`,
			`DELETE FROM tool_calls WHERE session_id = ? AND message_seq >= ?`,
			`DELETE FROM turn_usage WHERE session_id = ? AND message_seq >= ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id, seq); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?`, ms(s.now()), id)
		return err
	}))
}

// LastUserSeq is the seq of the last user message of session id (0: none).
// It is the store's own count: a resumed session's history in memory may hold
// repaired messages the store does not.
func (s *Store) LastUserSeq(ctx context.Context, id string) (int, error) {
	var seq int
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ? AND role = 'user'`, id).Scan(&seq)
	return seq, s.wrap("reading messages", err)
}
