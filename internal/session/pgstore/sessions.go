package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/session"
)

// NewSession creates a session and returns its id. A zero ID gets a new one;
// zero times are now.
func (s *Store) NewSession(ctx context.Context, sess session.Session) (string, error) {
	now := s.now()
	generated := sess.ID == ""
	if generated {
		sess.ID = session.NewID(now)
	}
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	meta, err := json.Marshal(sess.Metadata)
	if err != nil || sess.Metadata == nil {
		meta = []byte("{}")
	}
	var ended *int64
	if sess.EndedAt != nil {
		v := ms(*sess.EndedAt)
		ended = &v
	}
	for attempt := 0; ; attempt++ {
		_, err = s.pool.Exec(ctx, `INSERT INTO sessions (id, created_at, updated_at, title, model, source, ended_at, metadata, parent_session_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, sess.ID, ms(sess.CreatedAt), ms(sess.UpdatedAt), sess.Title, sess.Model, sess.Source, ended, string(meta), sess.ParentID)
		// A generated id has 24 random bits per second (see session.NewSession).
		if !generated || attempt == 4 || pgCode(err) != uniqueViolation {
			break
		}
		sess.ID = session.NewID(now)
	}
	if err != nil {
		return "", s.wrap("creating a session", err)
	}
	return sess.ID, nil
}

const sessionCols = `s.id, s.created_at, s.updated_at, s.title, s.model, s.source, s.ended_at, s.metadata, s.parent_session_id,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	coalesce((SELECT substr(m.content, 1, 200) FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.seq LIMIT 1), ''),
	coalesce((SELECT k.session_key FROM session_keys k WHERE k.session_id = s.id ORDER BY k.updated_at DESC LIMIT 1), '')`

func scanSession(r pgx.Row) (session.Session, error) {
	var (
		sess             session.Session
		created, updated int64
		ended            *int64
		meta             string
	)
	if err := r.Scan(&sess.ID, &created, &updated, &sess.Title, &sess.Model, &sess.Source, &ended, &meta, &sess.ParentID, &sess.MessageCount, &sess.Preview, &sess.Key); err != nil {
		return sess, err
	}
	sess.CreatedAt, sess.UpdatedAt = fromMS(created), fromMS(updated)
	if ended != nil {
		t := fromMS(*ended)
		sess.EndedAt = &t
	}
	if meta != "" && meta != "{}" {
		_ = json.Unmarshal([]byte(meta), &sess.Metadata)
	}
	return sess, nil
}

// Get returns session id.
func (s *Store) Get(ctx context.Context, id string) (session.Session, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions s WHERE s.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, session.NotFound(id)
	}
	return sess, s.wrap("reading a session", err)
}

// Resolve finds a session by its full id or by a prefix only one session has.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	if _, err := s.Get(ctx, idOrPrefix); err == nil || !errors.Is(err, session.ErrNotFound) {
		return idOrPrefix, err
	}
	if idOrPrefix == "" {
		return "", session.NotFound(idOrPrefix)
	}
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(idOrPrefix) + "%"
	rows, err := s.pool.Query(ctx, `SELECT id FROM sessions WHERE id LIKE $1 ESCAPE '\' ORDER BY id LIMIT 3`, like)
	if err != nil {
		return "", s.wrap("finding a session", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", s.wrap("finding a session", err)
	}
	switch len(ids) {
	case 0:
		return "", session.NotFound(idOrPrefix)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%q matches several sessions (%s, ...): give more of the id", idOrPrefix, strings.Join(ids[:2], ", "))
}

// List returns the most recently updated sessions first; limit ≤ 0 means all.
func (s *Store) List(ctx context.Context, limit int) ([]session.Session, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions s ORDER BY s.updated_at DESC, s.id DESC LIMIT $1`, lim)
	if err != nil {
		return nil, s.wrap("listing sessions", err)
	}
	defer rows.Close()
	out := []session.Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, s.wrap("listing sessions", err)
		}
		out = append(out, sess)
	}
	return out, s.wrap("listing sessions", rows.Err())
}

// update runs one statement on session id's row: ErrNotFound when none.
func (s *Store) update(ctx context.Context, id, what, query string, args ...any) error {
	tag, err := s.pool.Exec(ctx, query, args...)
	if err != nil {
		return s.wrap(what, err)
	}
	if tag.RowsAffected() == 0 {
		return session.NotFound(id)
	}
	return nil
}

// EndSession marks session id as ended now (an append clears the mark).
func (s *Store) EndSession(ctx context.Context, id string) error {
	return s.update(ctx, id, "ending a session", `UPDATE sessions SET ended_at = $1, updated_at = greatest(updated_at, $1) WHERE id = $2`, ms(s.now()), id)
}

// SetTitle sets session id's title.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	return s.update(ctx, id, "setting a title", `UPDATE sessions SET title = $1 WHERE id = $2`, strings.TrimSpace(title), id)
}

// SetMetadata merges kv into session id's metadata (a nil value removes the key).
func (s *Store) SetMetadata(ctx context.Context, id string, kv map[string]any) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var raw string
		err := tx.QueryRow(ctx, `SELECT metadata FROM sessions WHERE id = $1 FOR UPDATE`, id).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return session.NotFound(id)
		}
		if err != nil {
			return err
		}
		meta := map[string]any{}
		_ = json.Unmarshal([]byte(raw), &meta)
		for k, v := range kv {
			if v == nil {
				delete(meta, k)
			} else {
				meta[k] = v
			}
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE sessions SET metadata = $1 WHERE id = $2`, string(b), id)
		return err
	})
	return s.wrap("setting metadata", err)
}

// Delete removes session id with its messages, tool calls, usage and keys
// (the foreign keys cascade).
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.update(ctx, id, "deleting a session", `DELETE FROM sessions WHERE id = $1`, id)
}
