// Package session stores conversations in $HERMES_HOME/state.db: sessions, their
// messages and tool calls, with full-text search over what was said.
//
// SQLite through modernc.org/sqlite (pure Go: hermes builds with CGO_ENABLED=0), in
// WAL mode with a busy timeout so several hermes processes can write their own
// sessions at once. Every AppendMessage is its own committed transaction, so a crash
// (or kill -9) mid-turn loses nothing already said. The schema is versioned with PRAGMA
// user_version and migrated forward on Open.
package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/llm"
)

// FileName is the store's file inside HERMES_HOME.
const FileName = "state.db"

// Path is the store's path for a HERMES_HOME directory.
func Path(hermesHome string) string { return filepath.Join(hermesHome, FileName) }

// ErrNotFound is returned (wrapped) for a session id that is not in the store.
var ErrNotFound = errors.New("no such session")

// Session is one conversation.
type Session struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Title     string     `json:"title"`
	Model     string     `json:"model"`
	Source    string     `json:"source"` // "cli", "telegram", ...
	// ParentID is the session this one continues after a compaction ("" for none).
	ParentID string `json:"parent_session_id,omitempty"`
	// Key is the gateway session key that routes to this session (filled by
	// Get and List; "" for none).
	Key      string         `json:"session_key,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`

	// Filled by Get and List.
	MessageCount int    `json:"message_count"`
	Preview      string `json:"preview,omitempty"` // the start of the first user message
}

// Message is a stored message with its position and time.
type Message struct {
	Seq       int       `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
	// SourceID is the incoming delivery the message answers (AppendFrom):
	// set on a cluster turn's user message, "" on the rest.
	SourceID string `json:"source_id,omitempty"`
	llm.Message
}

// MarshalJSON flattens the embedded llm.Message (whose own MarshalJSON would
// otherwise take over the whole object).
func (m Message) MarshalJSON() ([]byte, error) {
	inner, err := json.Marshal(m.Message)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		Seq       int       `json:"seq"`
		CreatedAt time.Time `json:"created_at"`
		SourceID  string    `json:"source_id,omitempty"`
	}{m.Seq, m.CreatedAt, m.SourceID})
	if err != nil {
		return nil, err
	}
	if len(inner) <= 2 {
		return head, nil
	}
	return append(append(head[:len(head)-1], ','), inner[1:]...), nil
}

// ToolCall is one tool call as it ran.
type ToolCall struct {
	SessionID  string        `json:"session_id"`
	MessageSeq int           `json:"message_seq"` // the assistant message that asked for it; 0: found by CallID
	CallID     string        `json:"call_id"`
	Name       string        `json:"name"`
	Args       string        `json:"args"` // the arguments as the model sent them (JSON text)
	Result     string        `json:"result"`
	Status     string        `json:"status,omitempty"` // "ok", "error", "blocked"
	Error      string        `json:"error,omitempty"`
	Duration   time.Duration `json:"-"`
	DurationMS int64         `json:"duration_ms"`
	CreatedAt  time.Time     `json:"created_at"`
}

// Hit is one search result.
type Hit struct {
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	Seq       int       `json:"seq"`
	Role      string    `json:"role"`
	Snippet   string    `json:"snippet"` // matches marked [like this]
	CreatedAt time.Time `json:"created_at"`
}

// Store is an open state.db. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	path  string
	now   func() time.Time
	group commitGroup // this process's writers, committed together (groupcommit.go)
	stmts sync.Map    // query → *sql.Stmt (stmts.go)
}

// Open opens (creating if needed) the store at path and migrates its schema.
func Open(ctx context.Context, path string) (*Store, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("session store %s is a directory, not a database file", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	// Conversations are private: create the file 0600 before SQLite does (its WAL
	// and shm files take the database file's mode).
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("session store: %w", err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	q.Set("_journal_mode", "WAL")
	// NORMAL: in WAL mode a commit is written to the WAL (the OS holds it) before
	// AppendMessage returns, so it survives the process being killed; only a
	// power loss or kernel crash can drop the last commits since a checkpoint
	// (never corrupting the file). FULL's fsync per commit cost a gateway most
	// of its throughput (docs/DESIGN.md, "Gateway performance").
	q.Set("_synchronous", "NORMAL")
	// Writers take the write lock when their transaction begins, so two processes
	// never deadlock upgrading read locks (the busy timeout then just queues them).
	q.Set("_txlock", "immediate")
	dsn := path + "?" + q.Encode()
	// Several processes opening a new store at once race to switch it to WAL and
	// create the schema; SQLite answers some of those lock waits with SQLITE_BUSY
	// at once instead of calling the busy handler, so a busy first open is retried.
	deadline := clock.Now().Add(10 * time.Second)
	for attempt := 1; ; attempt++ {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, unreadable(path, err)
		}
		db.SetMaxOpenConns(4)
		// As many kept idle as may be open: a connection closed after use was
		// opened again (the pragmas applied anew) and lost its prepared
		// statements.
		db.SetMaxIdleConns(4)
		s := &Store{db: db, path: path, now: clock.Now}
		err = s.migrate(ctx)
		if err == nil {
			return s, nil
		}
		db.Close()
		if !isBusy(err) || clock.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(min(attempt, 10)) * 10 * time.Millisecond):
		}
	}
}

// sqlitePrimaryKey is SQLITE_CONSTRAINT_PRIMARYKEY.
const sqlitePrimaryKey = 1555

func isPrimaryKeyClash(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlitePrimaryKey
}

// sqliteBusy is SQLITE_BUSY, the primary result code.
const sqliteBusy = 5

// isBusy reports SQLite's "database is locked" (SQLITE_BUSY and its extended codes).
func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqliteBusy
	}
	return false
}

func unreadable(path string, err error) error {
	return fmt.Errorf("session store %s is unreadable: %w (move it aside to start a new one)", path, err)
}

// SetClock replaces the clock that stamps messages and sessions (tests and seed
// data use a fixed one).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Close closes the database.
func (s *Store) Close() error {
	s.closeStmts()
	return s.db.Close()
}

// migrations are applied in order; migration i brings user_version from i to i+1.
// Never edit one that has shipped: add a new one.
var migrations = []string{
	`CREATE TABLE sessions (
		id         TEXT PRIMARY KEY,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		title      TEXT NOT NULL DEFAULT '',
		model      TEXT NOT NULL DEFAULT '',
		source     TEXT NOT NULL DEFAULT '',
		ended_at   INTEGER,
		metadata   TEXT NOT NULL DEFAULT '{}'
	);
	CREATE INDEX sessions_updated ON sessions(updated_at);
	CREATE TABLE messages (
		id           INTEGER PRIMARY KEY,
		session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL DEFAULT '',
		name         TEXT NOT NULL DEFAULT '',
		tool_call_id TEXT NOT NULL DEFAULT '',
		tool_calls   TEXT,
		created_at   INTEGER NOT NULL,
		UNIQUE (session_id, seq)
	);
	CREATE TABLE tool_calls (
		id          INTEGER PRIMARY KEY,
		session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		message_seq INTEGER NOT NULL DEFAULT 0,
		call_id     TEXT NOT NULL DEFAULT '',
		tool_name   TEXT NOT NULL,
		args        TEXT NOT NULL DEFAULT '',
		result      TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		error       TEXT NOT NULL DEFAULT '',
		duration_ms INTEGER NOT NULL DEFAULT 0,
		created_at  INTEGER NOT NULL
	);
	CREATE INDEX tool_calls_session ON tool_calls(session_id, message_seq);
	CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
	CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
		INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
	END;
	CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
		INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
	END;
	CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
		INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
		INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
	END;`,
	// 2: the gateway's routing index: which session a chat's key continues,
	// and where its answers go (the Source as JSON); its delivery ledger.
	`CREATE TABLE session_keys (
		session_key TEXT PRIMARY KEY,
		session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		origin      TEXT NOT NULL DEFAULT '{}',
		updated_at  INTEGER NOT NULL
	);
	CREATE INDEX session_keys_session ON session_keys(session_id);
	CREATE TABLE deliveries (
		id          INTEGER PRIMARY KEY,
		session_key TEXT NOT NULL,
		platform    TEXT NOT NULL,
		route       TEXT NOT NULL DEFAULT '{}',
		text        TEXT NOT NULL,
		created_at  INTEGER NOT NULL,
		attempts    INTEGER NOT NULL DEFAULT 0,
		sent_at     INTEGER
	);
	CREATE INDEX deliveries_unsent ON deliveries(sent_at, created_at);`,
	// 3: compaction chains: a compacted conversation continues in a child
	// session whose parent keeps the full history (upstream's column name).
	`ALTER TABLE sessions ADD COLUMN parent_session_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX sessions_parent ON sessions(parent_session_id);`,
	// 4: new messages are indexed for search by the store, once per commit
	// (indexing.go), not by a trigger per row: FTS5 flushed its index at every
	// statement of a transaction, a segment per message.
	`DROP TRIGGER IF EXISTS messages_fts_insert;`,
	// 5: the token usage of each turn, as the endpoint reported it, and its
	// cost when the model's price was configured (NULL: unknown).
	`CREATE TABLE turn_usage (
		id                INTEGER PRIMARY KEY,
		session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		message_seq       INTEGER NOT NULL,
		model             TEXT NOT NULL DEFAULT '',
		api_calls         INTEGER NOT NULL DEFAULT 0,
		prompt_tokens     INTEGER NOT NULL DEFAULT 0,
		completion_tokens INTEGER NOT NULL DEFAULT 0,
		total_tokens      INTEGER NOT NULL DEFAULT 0,
		cost_usd          REAL,
		created_at        INTEGER NOT NULL
	);
	CREATE INDEX turn_usage_session ON turn_usage(session_id, message_seq);`,
	// 6: which incoming delivery a turn's user message answers (a cluster
	// queue item: "telegram:<update_id>"; NULL for the rest), so a
	// redelivered update finds how far its turn got by identity, not text.
	`ALTER TABLE messages ADD COLUMN source_id TEXT;`,
}

// SchemaVersion is the schema this code writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return unreadable(s.path, err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("session store %s has schema version %d, newer than this hermes knows (%d): upgrade hermes", s.path, v, SchemaVersion)
	}
	if v == SchemaVersion {
		return s.check(ctx)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unreadable(s.path, err)
	}
	defer tx.Rollback()
	// Another process may have migrated while this one waited for the lock.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return unreadable(s.path, err)
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("session store %s: migrating the schema to version %d: %w", s.path, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("session store %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session store %s: %w", s.path, err)
	}
	return nil
}

// check reads the tables once, so a damaged file fails at Open with its name rather
// than later in the middle of a turn.
func (s *Store) check(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		return unreadable(s.path, err)
	}
	return nil
}

// NewID returns a new session id: sortable by creation time, e.g. 20261130_023801_ab12cd.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b[:])
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// nullIfEmpty stores "" as NULL (a column most rows leave unset).
func nullIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// NewSession creates a session and returns its id. A zero ID gets a new one; zero
// times are now.
func (s *Store) NewSession(ctx context.Context, sess Session) (string, error) {
	now := s.now()
	generated := sess.ID == ""
	if generated {
		sess.ID = NewID(now)
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
	var ended any
	if sess.EndedAt != nil {
		ended = ms(*sess.EndedAt)
	}
	for attempt := 0; ; attempt++ {
		_, err = s.exec(ctx, `INSERT INTO sessions (id, created_at, updated_at, title, model, source, ended_at, metadata, parent_session_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, sess.ID, ms(sess.CreatedAt), ms(sess.UpdatedAt), sess.Title, sess.Model, sess.Source, ended, string(meta), sess.ParentID)
		// A generated id has 24 random bits per second: a gateway that opens a
		// thousand conversations in one second draws the same one about once
		// in thirty. Draw again.
		if !generated || attempt == 4 || !isPrimaryKeyClash(err) {
			break
		}
		sess.ID = NewID(now)
	}
	if err != nil {
		return "", s.wrap("creating a session", err)
	}
	return sess.ID, nil
}

func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("session store %s: %s: %w", s.path, what, err)
}

func notFound(id string) error { return fmt.Errorf("%w %q", ErrNotFound, id) }

// AppendMessage adds m at the end of session id and commits it before returning.
// It returns the message's seq (1 for the first message).
func (s *Store) AppendMessage(ctx context.Context, id string, m llm.Message) (int, error) {
	return s.AppendFrom(ctx, id, m, "")
}

// AppendFrom is AppendMessage for a message that answers the incoming
// delivery sourceID ("" for none), stored with it (History's SourceID).
func (s *Store) AppendFrom(ctx context.Context, id string, m llm.Message, sourceID string) (int, error) {
	var calls any
	if len(m.ToolCalls) > 0 {
		b, err := json.Marshal(m.ToolCalls)
		if err != nil {
			return 0, fmt.Errorf("session store: encoding tool calls: %w", err)
		}
		calls = string(b)
	}
	var seq int
	err := s.appendTx(ctx, func(tx *sql.Tx) error {
		now := ms(s.now())
		res, err := s.txExec(ctx, tx, `UPDATE sessions SET updated_at = max(updated_at, ?), ended_at = NULL WHERE id = ?`, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(id)
		}
		if err := s.txQueryRow(ctx, tx, `SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?`, id).Scan(&seq); err != nil {
			return err
		}
		_, err = s.txExec(ctx, tx, `INSERT INTO messages (session_id, seq, role, content, name, tool_call_id, tool_calls, created_at, source_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, seq, m.Role, m.Content, m.Name, m.ToolCallID, calls, now, nullIfEmpty(sourceID))
		return err
	})
	if err != nil {
		return 0, s.wrap("appending a message", err)
	}
	return seq, nil
}

// RecordToolCall stores one tool call. With MessageSeq 0 the assistant message whose
// tool_calls hold CallID is looked up (the latest such one).
func (s *Store) RecordToolCall(ctx context.Context, id string, tc ToolCall) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ?`, id).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return notFound(id)
		}
		seq := tc.MessageSeq
		if seq == 0 && tc.CallID != "" {
			err := tx.QueryRowContext(ctx, `SELECT m.seq FROM messages m, json_each(m.tool_calls) c
				WHERE m.session_id = ? AND m.tool_calls IS NOT NULL AND json_extract(c.value, '$.id') = ?
				ORDER BY m.seq DESC LIMIT 1`, id, tc.CallID).Scan(&seq)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		dur := tc.DurationMS
		if tc.Duration != 0 {
			dur = tc.Duration.Milliseconds()
		}
		created := tc.CreatedAt
		if created.IsZero() {
			created = s.now()
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO tool_calls (session_id, message_seq, call_id, tool_name, args, result, status, error, duration_ms, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, seq, tc.CallID, tc.Name, tc.Args, tc.Result, tc.Status, tc.Error, dur, ms(created))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?`, ms(created), id)
		return err
	})
	return s.wrap("recording a tool call", err)
}

// Delete removes session id with its messages and tool calls.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Children first, explicitly: the FTS index is kept by the messages trigger.
		if _, err := tx.ExecContext(ctx, `DELETE FROM tool_calls WHERE session_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?`, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound(id)
		}
		return nil
	})
	return s.wrap("deleting a session", err)
}

// EndSession marks session id as ended now. Appending to it again (a resume) clears
// the mark, so a session that crashed mid-turn never looks ended.
func (s *Store) EndSession(ctx context.Context, id string) error {
	return s.update(ctx, id, "ending a session", `UPDATE sessions SET ended_at = ?1, updated_at = max(updated_at, ?1) WHERE id = ?2`, ms(s.now()), id)
}

// SetTitle sets session id's title.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	return s.update(ctx, id, "setting a title", `UPDATE sessions SET title = ?1 WHERE id = ?2`, strings.TrimSpace(title), id)
}

// SetMetadata merges kv into session id's metadata (a nil value removes the key).
func (s *Store) SetMetadata(ctx context.Context, id string, kv map[string]any) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var raw string
		if err := tx.QueryRowContext(ctx, `SELECT metadata FROM sessions WHERE id = ?`, id).Scan(&raw); errors.Is(err, sql.ErrNoRows) {
			return notFound(id)
		} else if err != nil {
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
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET metadata = ? WHERE id = ?`, string(b), id)
		return err
	})
	return s.wrap("setting metadata", err)
}

func (s *Store) update(ctx context.Context, id, what, query string, args ...any) error {
	res, err := s.exec(ctx, query, args...)
	if err != nil {
		return s.wrap(what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(id)
	}
	return nil
}
