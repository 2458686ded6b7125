package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
