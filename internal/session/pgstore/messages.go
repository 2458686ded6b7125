package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// appendSQL is one round trip per message: the UPDATE locks the session's
// row and draws the next seq from it (an UPDATE sees the latest committed
// row, so two processes appending to one session queue on that lock and get
// consecutive seqs); no row means no such session.
const appendSQL = `WITH s AS (
		UPDATE sessions SET updated_at = greatest(updated_at, $2), ended_at = NULL, last_seq = last_seq + 1
		WHERE id = $1 RETURNING last_seq)
	INSERT INTO messages (session_id, seq, role, content, name, tool_call_id, tool_calls, created_at, source_id)
	SELECT $1, s.last_seq, $3, $4, $5, $6, $7, $2, nullif($8, '') FROM s
	RETURNING seq`

// AppendMessage adds m at the end of session id, committed before it
// returns, and returns its seq (1 for the first message).
func (s *Store) AppendMessage(ctx context.Context, id string, m llm.Message) (int, error) {
	return s.AppendFrom(ctx, id, m, "")
}

// AppendFrom is AppendMessage for a message that answers the incoming
// delivery sourceID ("" for none): one more column of the same statement.
func (s *Store) AppendFrom(ctx context.Context, id string, m llm.Message, sourceID string) (int, error) {
	var calls []byte
	if len(m.ToolCalls) > 0 {
		b, err := json.Marshal(m.ToolCalls)
		if err != nil {
			return 0, fmt.Errorf("session store: encoding tool calls: %w", err)
		}
		calls = b
	}
	var seq int
	err := s.pool.QueryRow(ctx, appendSQL, id, ms(s.now()), m.Role, m.Content, m.Name, m.ToolCallID, calls, sourceID).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, session.NotFound(id)
	}
	if err != nil {
		return 0, s.wrap("appending a message", err)
	}
	return seq, nil
}

// Messages returns the conversation of session id in order.
func (s *Store) Messages(ctx context.Context, id string) ([]llm.Message, error) {
	stored, err := s.History(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(stored))
	for i, m := range stored {
		out[i] = m.Message
	}
	return out, nil
}

// History is Messages with each message's seq and time.
func (s *Store) History(ctx context.Context, id string) ([]session.Message, error) {
	// The session row comes along (a LEFT JOIN), so a session without
	// messages and no session at all are told apart in one query.
	rows, err := s.pool.Query(ctx, `SELECT m.seq, m.role, m.content, m.name, m.tool_call_id, m.tool_calls, m.created_at, m.source_id
		FROM sessions s LEFT JOIN messages m ON m.session_id = s.id WHERE s.id = $1 ORDER BY m.seq`, id)
	if err != nil {
		return nil, s.wrap("reading messages", err)
	}
	defer rows.Close()
	found := false
	var out []session.Message
	for rows.Next() {
		found = true
		var (
			seq                         *int
			role, content, name, callID *string
			calls                       []byte
			created                     *int64
			source                      *string
		)
		if err := rows.Scan(&seq, &role, &content, &name, &callID, &calls, &created, &source); err != nil {
			return nil, s.wrap("reading messages", err)
		}
		if seq == nil {
			continue
		}
		m := session.Message{Seq: *seq, CreatedAt: fromMS(*created)}
		m.Role, m.Content, m.Name, m.ToolCallID = *role, *content, *name, *callID
		if source != nil {
			m.SourceID = *source
		}
		if err := decodeCalls(calls, &m.Message); err != nil {
			return nil, s.wrap(fmt.Sprintf("message %d of session %s has unreadable tool calls", m.Seq, id), err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("reading messages", err)
	}
	if !found {
		return nil, session.NotFound(id)
	}
	return out, nil
}

func decodeCalls(raw []byte, m *llm.Message) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, &m.ToolCalls)
}

// RecordToolCall stores one tool call. With MessageSeq 0 the assistant
// message whose tool_calls hold CallID is looked up (the latest such one).
func (s *Store) RecordToolCall(ctx context.Context, id string, tc session.ToolCall) error {
	dur := tc.DurationMS
	if tc.Duration != 0 {
		dur = tc.Duration.Milliseconds()
	}
	created := tc.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	// One statement: the session's row (its updated_at moved) says it
	// exists; the seq is found by jsonb containment.
	var n int
	err := s.pool.QueryRow(ctx, `WITH s AS (
			UPDATE sessions SET updated_at = greatest(updated_at, $10) WHERE id = $1 RETURNING id),
		seq AS (
			SELECT CASE WHEN $2::int <> 0 OR $3 = '' THEN $2::int ELSE coalesce((
				SELECT m.seq FROM messages m WHERE m.session_id = $1 AND m.tool_calls @> jsonb_build_array(jsonb_build_object('id', $3::text))
				ORDER BY m.seq DESC LIMIT 1), 0) END AS v),
		ins AS (
			INSERT INTO tool_calls (session_id, message_seq, call_id, tool_name, args, result, status, error, duration_ms, created_at)
			SELECT $1, seq.v, $3, $4, $5, $6, $7, $8, $9, $10 FROM s, seq RETURNING 1)
		SELECT count(*) FROM ins`,
		id, tc.MessageSeq, tc.CallID, tc.Name, tc.Args, tc.Result, tc.Status, tc.Error, dur, ms(created)).Scan(&n)
	if err == nil && n == 0 {
		return session.NotFound(id)
	}
	return s.wrap("recording a tool call", err)
}

// ToolCalls returns the tool calls recorded for session id, in the order they ran.
func (s *Store) ToolCalls(ctx context.Context, id string) ([]session.ToolCall, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_seq, call_id, tool_name, args, result, status, error, duration_ms, created_at
		FROM tool_calls WHERE session_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, s.wrap("reading tool calls", err)
	}
	defer rows.Close()
	var out []session.ToolCall
	for rows.Next() {
		tc := session.ToolCall{SessionID: id}
		var created int64
		if err := rows.Scan(&tc.MessageSeq, &tc.CallID, &tc.Name, &tc.Args, &tc.Result, &tc.Status, &tc.Error, &tc.DurationMS, &created); err != nil {
			return nil, s.wrap("reading tool calls", err)
		}
		tc.Duration = time.Duration(tc.DurationMS) * time.Millisecond
		tc.CreatedAt = fromMS(created)
		out = append(out, tc)
	}
	return out, s.wrap("reading tool calls", rows.Err())
}

// webQuery turns what a user typed into websearch_to_tsquery's input: every
// word quoted, so each is taken literally (as a phrase of its tokens, as
// FTS5 takes a quoted word) and none is an operator ("or", "-").
func webQuery(words []string) string {
	parts := make([]string, 0, len(words))
	for _, w := range words {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, " ")+`"`)
	}
	return strings.Join(parts, " ")
}

// searchSQL ranks in an inner query and makes snippets only for the rows
// kept: ts_headline re-parses each message it is given.
const searchSQL = `WITH q AS (SELECT websearch_to_tsquery('hermes_search', $1) AS q),
	top AS (
		SELECT m.id, m.session_id, m.seq, ts_rank(m.search, q.q) AS r FROM messages m, q
		WHERE m.search @@ q.q ORDER BY r DESC, m.session_id DESC, m.seq LIMIT $2)
	SELECT m.session_id, s.title, m.seq, m.role,
		ts_headline('hermes_search', m.content, q.q, 'StartSel=[, StopSel=], MaxWords=12, MinWords=6, ShortWord=0, MaxFragments=1, FragmentDelimiter=…'),
		m.created_at
	FROM top JOIN messages m ON m.id = top.id JOIN sessions s ON s.id = m.session_id, q
	ORDER BY top.r DESC, top.session_id DESC, top.seq`

// Search finds messages containing every word of term, best matches first;
// limit ≤ 0 means 50.
func (s *Store) Search(ctx context.Context, term string, limit int) ([]session.Hit, error) {
	words := session.SearchWords(term)
	if len(words) == 0 {
		return nil, session.ErrNoSearchWord
	}
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.pool.Query(ctx, searchSQL, webQuery(words), limit)
	if err != nil {
		return nil, s.wrap("searching", err)
	}
	defer rows.Close()
	out := []session.Hit{}
	for rows.Next() {
		var (
			h       session.Hit
			created int64
		)
		if err := rows.Scan(&h.SessionID, &h.Title, &h.Seq, &h.Role, &h.Snippet, &created); err != nil {
			return nil, s.wrap("searching", err)
		}
		h.CreatedAt = fromMS(created)
		out = append(out, h)
	}
	return out, s.wrap("searching", rows.Err())
}

// TruncateFrom drops the messages of session id from seq on, with their tool
// calls and turn usage: /undo of the last exchange.
func (s *Store) TruncateFrom(ctx context.Context, id string, seq int) error {
	return s.wrap("dropping messages", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The session's row first: an append to it waits, then continues
		// from the seq this leaves.
		if _, err := tx.Exec(ctx, `UPDATE sessions SET updated_at = greatest(updated_at, $1), last_seq = least(last_seq, greatest($3::int - 1, 0))
			WHERE id = $2`, ms(s.now()), id, seq); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM messages WHERE session_id = $1 AND seq >= $2`,
			`DELETE FROM tool_calls WHERE session_id = $1 AND message_seq >= $2`,
			`DELETE FROM turn_usage WHERE session_id = $1 AND message_seq >= $2`,
		} {
			if _, err := tx.Exec(ctx, q, id, seq); err != nil {
				return err
			}
		}
		return nil
	}))
}

// LastUserSeq is the seq of the last user message of session id (0: none).
func (s *Store) LastUserSeq(ctx context.Context, id string) (int, error) {
	var seq int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = $1 AND role = 'user'`, id).Scan(&seq)
	return seq, s.wrap("reading messages", err)
}
