package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

// Reading sessions back: messages, tool calls, lookups by id or prefix, the
// listing and the full-text search.

// Messages returns the conversation of session id in order, as the model saw it:
// what --resume continues from.
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
func (s *Store) History(ctx context.Context, id string) ([]Message, error) {
	var one int
	if err := s.queryRow(ctx, `SELECT 1 FROM sessions WHERE id = ?`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	} else if err != nil {
		return nil, s.wrap("reading a session", err)
	}
	rows, err := s.query(ctx, `SELECT seq, role, content, name, tool_call_id, tool_calls, created_at, coalesce(source_id, '')
		FROM messages WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, s.wrap("reading messages", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var (
			m       Message
			calls   sql.NullString
			created int64
		)
		if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &m.Name, &m.ToolCallID, &calls, &created, &m.SourceID); err != nil {
			return nil, s.wrap("reading messages", err)
		}
		if calls.Valid && calls.String != "" {
			if err := json.Unmarshal([]byte(calls.String), &m.ToolCalls); err != nil {
				return nil, s.wrap(fmt.Sprintf("message %d of session %s has unreadable tool calls", m.Seq, id), err)
			}
		}
		m.CreatedAt = fromMS(created)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("reading messages", err)
	}
	return out, nil
}

// ToolCalls returns the tool calls recorded for session id, in the order they ran.
func (s *Store) ToolCalls(ctx context.Context, id string) ([]ToolCall, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT message_seq, call_id, tool_name, args, result, status, error, duration_ms, created_at
		FROM tool_calls WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, s.wrap("reading tool calls", err)
	}
	defer rows.Close()
	var out []ToolCall
	for rows.Next() {
		tc := ToolCall{SessionID: id}
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

const sessionCols = `s.id, s.created_at, s.updated_at, s.title, s.model, s.source, s.ended_at, s.metadata, s.parent_session_id,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	coalesce((SELECT substr(m.content, 1, 200) FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.seq LIMIT 1), ''),
	coalesce((SELECT k.session_key FROM session_keys k WHERE k.session_id = s.id ORDER BY k.updated_at DESC LIMIT 1), '')`

type scanner interface{ Scan(...any) error }

func scanSession(r scanner) (Session, error) {
	var (
		sess             Session
		created, updated int64
		ended            sql.NullInt64
		meta             string
	)
	if err := r.Scan(&sess.ID, &created, &updated, &sess.Title, &sess.Model, &sess.Source, &ended, &meta, &sess.ParentID, &sess.MessageCount, &sess.Preview, &sess.Key); err != nil {
		return sess, err
	}
	sess.CreatedAt, sess.UpdatedAt = fromMS(created), fromMS(updated)
	if ended.Valid {
		t := fromMS(ended.Int64)
		sess.EndedAt = &t
	}
	if meta != "" && meta != "{}" {
		_ = json.Unmarshal([]byte(meta), &sess.Metadata)
	}
	return sess, nil
}

// Get returns session id.
func (s *Store) Get(ctx context.Context, id string) (Session, error) {
	sess, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions s WHERE s.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sess, notFound(id)
	}
	if err != nil {
		return sess, s.wrap("reading a session", err)
	}
	return sess, nil
}

// Resolve finds a session by its full id or by a prefix of it that only one session
// has (users type the start of an id).
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	if _, err := s.Get(ctx, idOrPrefix); err == nil || !errors.Is(err, ErrNotFound) {
		return idOrPrefix, err
	}
	if idOrPrefix == "" {
		return "", notFound(idOrPrefix)
	}
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(idOrPrefix) + "%"
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\' ORDER BY id LIMIT 3`, like)
	if err != nil {
		return "", s.wrap("finding a session", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", s.wrap("finding a session", err)
		}
		ids = append(ids, id)
	}
	switch len(ids) {
	case 0:
		return "", notFound(idOrPrefix)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%q matches several sessions (%s, ...): give more of the id", idOrPrefix, strings.Join(ids[:2], ", "))
}

// List returns the most recently updated sessions first; limit ≤ 0 means all.
func (s *Store) List(ctx context.Context, limit int) ([]Session, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions s ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, s.wrap("listing sessions", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, s.wrap("listing sessions", err)
		}
		out = append(out, sess)
	}
	return out, s.wrap("listing sessions", rows.Err())
}

// ftsQuery turns what a user typed into an FTS5 query: every word must appear, each
// taken literally (FTS5 syntax characters in a search term are not operators).
func ftsQuery(term string) string {
	var parts []string
	for _, w := range strings.Fields(term) {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " ")
}

// Search finds messages containing every word of term, best matches first; limit ≤ 0
// means 50.
func (s *Store) Search(ctx context.Context, term string, limit int) ([]Hit, error) {
	q := ftsQuery(term)
	if q == "" {
		return nil, ErrNoSearchWord
	}
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.session_id, s.title, m.seq, m.role,
			snippet(messages_fts, 0, '[', ']', '…', 12), m.created_at
		FROM messages_fts
		JOIN messages m ON m.id = messages_fts.rowid
		JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ?
		ORDER BY bm25(messages_fts), m.session_id DESC, m.seq
		LIMIT ?`, q, limit)
	if err != nil {
		return nil, s.wrap("searching", err)
	}
	defer rows.Close()
	out := []Hit{}
	for rows.Next() {
		var (
			h       Hit
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
