package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order; migration i brings the schema from
// version i to i+1. Never edit one that has shipped: add a new one. Times
// are Unix milliseconds (bigint), as in state.db, so both engines stamp,
// compare and order alike.
var migrations = []string{
	// 1: the whole of state.db's schema at its version 5, with search by
	// PostgreSQL's own tsvector: a generated column and a GIN index. The text
	// search configuration is 'simple' (no stemming, no stop words: FTS5's
	// unicode61 tokenizer has neither) with accents folded when the unaccent
	// extension can be had (unicode61 folds them too).
	`DO $$
	BEGIN
		IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'unaccent') THEN
			BEGIN
				CREATE EXTENSION IF NOT EXISTS unaccent;
			EXCEPTION WHEN insufficient_privilege THEN
				RAISE NOTICE 'unaccent not installed: search will not fold accents';
			END;
		END IF;
		CREATE TEXT SEARCH CONFIGURATION hermes_search (COPY = pg_catalog.simple);
		IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') THEN
			ALTER TEXT SEARCH CONFIGURATION hermes_search
				ALTER MAPPING FOR word, hword, hword_part WITH unaccent, simple; -- ASCII words have no accents
		END IF;
	END $$;
	CREATE TABLE sessions (
		id                TEXT PRIMARY KEY,
		created_at        BIGINT NOT NULL,
		updated_at        BIGINT NOT NULL,
		title             TEXT NOT NULL DEFAULT '',
		model             TEXT NOT NULL DEFAULT '',
		source            TEXT NOT NULL DEFAULT '',
		ended_at          BIGINT,
		metadata          TEXT NOT NULL DEFAULT '{}',
		parent_session_id TEXT NOT NULL DEFAULT '',
		-- the seq of the session's last message: an append takes the row's
		-- lock and the next seq in one statement
		last_seq          INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_updated ON sessions(updated_at DESC, id DESC);
	CREATE INDEX sessions_parent ON sessions(parent_session_id);
	CREATE TABLE messages (
		id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL DEFAULT '',
		name         TEXT NOT NULL DEFAULT '',
		tool_call_id TEXT NOT NULL DEFAULT '',
		tool_calls   JSONB,
		created_at   BIGINT NOT NULL,
		search       TSVECTOR GENERATED ALWAYS AS (to_tsvector('hermes_search'::regconfig, content)) STORED,
		UNIQUE (session_id, seq)
	);
	CREATE INDEX messages_search ON messages USING gin (search);
	CREATE TABLE tool_calls (
		id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		message_seq INTEGER NOT NULL DEFAULT 0,
		call_id     TEXT NOT NULL DEFAULT '',
		tool_name   TEXT NOT NULL,
		args        TEXT NOT NULL DEFAULT '',
		result      TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		error       TEXT NOT NULL DEFAULT '',
		duration_ms BIGINT NOT NULL DEFAULT 0,
		created_at  BIGINT NOT NULL
	);
	CREATE INDEX tool_calls_session ON tool_calls(session_id, message_seq);
	CREATE TABLE session_keys (
		session_key TEXT PRIMARY KEY,
		session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		origin      TEXT NOT NULL DEFAULT '{}',
		updated_at  BIGINT NOT NULL
	);
	CREATE INDEX session_keys_session ON session_keys(session_id, updated_at DESC);
	CREATE TABLE deliveries (
		id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_key TEXT NOT NULL,
		platform    TEXT NOT NULL,
		route       TEXT NOT NULL DEFAULT '{}',
		text        TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		attempts    INTEGER NOT NULL DEFAULT 0,
		sent_at     BIGINT
	);
	CREATE INDEX deliveries_unsent ON deliveries(platform, created_at) WHERE sent_at IS NULL;
	CREATE INDEX deliveries_created ON deliveries(created_at);
	CREATE TABLE turn_usage (
		id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		message_seq       INTEGER NOT NULL,
		model             TEXT NOT NULL DEFAULT '',
		api_calls         INTEGER NOT NULL DEFAULT 0,
		prompt_tokens     BIGINT NOT NULL DEFAULT 0,
		completion_tokens BIGINT NOT NULL DEFAULT 0,
		total_tokens      BIGINT NOT NULL DEFAULT 0,
		cost_usd          DOUBLE PRECISION,
		created_at        BIGINT NOT NULL
	);
	CREATE INDEX turn_usage_session ON turn_usage(session_id, message_seq);`,
	// 2: the gateway's pairing state (pending codes, approved users, rate
	// limits): upstream's JSON files, one row each, named as the files are.
	`CREATE TABLE pairing_docs (
		name       TEXT PRIMARY KEY,
		data       BYTEA NOT NULL,
		updated_at BIGINT NOT NULL
	);`,
	// 3: which incoming delivery a turn's user message answers (state.db's
	// version 6): NULL for most rows, so adding it rewrites nothing.
	`ALTER TABLE messages ADD COLUMN source_id TEXT;`,
}

// SchemaVersion is the schema this code writes.
var SchemaVersion = len(migrations)

// migrateLock is the advisory lock key every hermes process takes to migrate
// (any constant: "hermes" in ASCII).
const migrateLock int64 = 0x6865726d6573

// Migrate brings the schema up to SchemaVersion and returns the version the
// database is at. One transaction holds the advisory lock throughout: a
// second process starting at once waits, then finds the work done; a failed
// migration leaves nothing behind.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	var v int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version    INTEGER PRIMARY KEY,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
			return err
		}
		if v > SchemaVersion {
			return &newerError{where: s.where, have: v}
		}
		for ; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, v+1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ne, ok := err.(*newerError); ok {
			return ne.have, ne
		}
		return 0, s.wrap("migrating", err)
	}
	return v, nil
}

// Version is the schema version the database is at.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	return v, s.wrap("reading the schema version", err)
}

type newerError struct {
	where string
	have  int
}

func (e *newerError) Error() string {
	return fmt.Sprintf("session store %s has schema version %d, newer than this hermes knows (%d): upgrade hermes on this machine", e.where, e.have, SchemaVersion)
}
