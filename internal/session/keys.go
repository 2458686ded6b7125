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

// KeyEntry is one row of the gateway's routing index: the session a chat's
// key continues and the route its answers take (Origin: the platform's
// Source as JSON, kept opaque here).
type KeyEntry struct {
	Key       string
	SessionID string
	Origin    string
}

// checkKey refuses what upstream refuses (CWE-22): a key is a name, never a path.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "..") || len(key) > 1024 {
		return fmt.Errorf("session key %q is not valid: it must be non-empty, at most 1024 bytes, without a leading '/' or '..'", key)
	}
	return nil
}

// BindKey routes key to session id (replacing any earlier binding, as /new
// does) and records origin.
func (s *Store) BindKey(ctx context.Context, key, id, origin string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if origin == "" {
		origin = "{}"
	}
	_, err := s.exec(ctx, `INSERT INTO session_keys (session_key, session_id, origin, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(session_key) DO UPDATE SET session_id = excluded.session_id, origin = excluded.origin, updated_at = excluded.updated_at`,
		key, id, origin, ms(s.now()))
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return notFound(id)
	}
	return s.wrap("binding a session key", err)
}

// LookupKey returns the session key routes to; ErrNotFound (wrapped) when none.
func (s *Store) LookupKey(ctx context.Context, key string) (KeyEntry, error) {
	e := KeyEntry{Key: key}
	err := s.queryRow(ctx, `SELECT session_id, origin FROM session_keys WHERE session_key = ?`, key).Scan(&e.SessionID, &e.Origin)
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("%w for key %q", ErrNotFound, key)
	}
	return e, s.wrap("looking up a session key", err)
}

// KeyMessages returns the session key routes to and its messages in order,
// read by one query (the gateway's way back into a conversation it no longer
// holds in memory: at every message of a chat beyond max_live_sessions).
// ErrNotFound (wrapped) when key routes to no session.
func (s *Store) KeyMessages(ctx context.Context, key string) (string, []llm.Message, error) {
	rows, err := s.query(ctx, `SELECT k.session_id, m.seq, m.role, m.content, m.name, m.tool_call_id, m.tool_calls
		FROM session_keys k JOIN sessions s ON s.id = k.session_id LEFT JOIN messages m ON m.session_id = k.session_id
		WHERE k.session_key = ? ORDER BY m.seq`, key)
	if err != nil {
		return "", nil, s.wrap("reading a session key's messages", err)
	}
	defer rows.Close()
	id, found := "", false
	var out []llm.Message
	for rows.Next() {
		var (
			seq                         sql.NullInt64
			role, content, name, callID sql.NullString
			calls                       sql.NullString
		)
		if err := rows.Scan(&id, &seq, &role, &content, &name, &callID, &calls); err != nil {
			return "", nil, s.wrap("reading a session key's messages", err)
		}
		found = true
		if !seq.Valid {
			continue // a session with no messages yet
		}
		m := llm.Message{Role: role.String, Content: content.String, Name: name.String, ToolCallID: callID.String}
		if calls.Valid && calls.String != "" {
			if err := json.Unmarshal([]byte(calls.String), &m.ToolCalls); err != nil {
				return "", nil, s.wrap(fmt.Sprintf("message %d of session %s has unreadable tool calls", seq.Int64, id), err)
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return "", nil, s.wrap("reading a session key's messages", err)
	}
	if !found {
		return "", nil, fmt.Errorf("%w for key %q", ErrNotFound, key)
	}
	return id, out, nil
}

// ActiveKeys returns the keys whose session, from source (a platform), was
// written to at or after since, the most recently active first, at most
// limit: the conversations a gateway taking over a platform's connection
// reads back (issue 19's Discord catch-up).
func (s *Store) ActiveKeys(ctx context.Context, source string, since time.Time, limit int) ([]KeyEntry, error) {
	rows, err := s.query(ctx, `SELECT k.session_key, k.session_id, k.origin FROM session_keys k JOIN sessions s ON s.id = k.session_id
		WHERE s.source = ? AND s.updated_at >= ? ORDER BY s.updated_at DESC, k.session_key LIMIT ?`, source, ms(since), max(limit, 0))
	if err != nil {
		return nil, s.wrap("listing active session keys", err)
	}
	defer rows.Close()
	var out []KeyEntry
	for rows.Next() {
		var e KeyEntry
		if err := rows.Scan(&e.Key, &e.SessionID, &e.Origin); err != nil {
			return nil, s.wrap("listing active session keys", err)
		}
		out = append(out, e)
	}
	return out, s.wrap("listing active session keys", rows.Err())
}
