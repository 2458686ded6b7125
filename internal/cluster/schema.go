package cluster

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationLock is the advisory lock key under which the schema is migrated:
// two processes starting together must not both apply version 1.
// ("hermescl" as eight bytes.)
const migrationLock int64 = 0x6865726d6573636c

// migrations are applied in order; version N is migrations[N-1]. A released
// version is never edited: a change is a new entry.
var migrations = []string{
	// 1: the queue, its dedupe ledger, leases, dead letters, members, the outbox.
	`
CREATE TABLE cluster_seen (
	platform  text NOT NULL,
	update_id text NOT NULL,
	seen_at   timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (platform, update_id)
);
CREATE INDEX cluster_seen_at ON cluster_seen (seen_at);
CREATE TABLE cluster_queue (
	id          bigserial PRIMARY KEY,
	session_key text NOT NULL,
	platform    text NOT NULL,
	update_id   text NOT NULL,
	payload     bytea NOT NULL,
	enqueued_at timestamptz NOT NULL DEFAULT now(),
	not_before  timestamptz NOT NULL DEFAULT now(),
	attempts    integer NOT NULL DEFAULT 0,
	claimed_by  text,
	claimed_at  timestamptz,
	last_error  text
);
CREATE INDEX cluster_queue_key ON cluster_queue (session_key, id);
CREATE TABLE cluster_leases (
	session_key  text PRIMARY KEY,
	holder       text NOT NULL,
	item_id      bigint NOT NULL,
	acquired_at  timestamptz NOT NULL DEFAULT now(),
	heartbeat_at timestamptz NOT NULL DEFAULT now(),
	expires_at   timestamptz NOT NULL
);
CREATE INDEX cluster_leases_holder ON cluster_leases (holder);
CREATE TABLE cluster_dead (
	id          bigint PRIMARY KEY,
	session_key text NOT NULL,
	platform    text NOT NULL,
	update_id   text NOT NULL,
	payload     bytea NOT NULL,
	enqueued_at timestamptz NOT NULL,
	attempts    integer NOT NULL,
	last_error  text,
	died_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE cluster_members (
	id         text PRIMARY KEY,
	host       text NOT NULL,
	pid        integer NOT NULL,
	started_at timestamptz NOT NULL DEFAULT now(),
	last_seen  timestamptz NOT NULL DEFAULT now(),
	leads      text[] NOT NULL DEFAULT '{}',
	draining   boolean NOT NULL DEFAULT false
);
CREATE TABLE cluster_outbox (
	id            bigserial PRIMARY KEY,
	role          text NOT NULL,
	payload       bytea NOT NULL,
	enqueued_at   timestamptz NOT NULL DEFAULT now(),
	attempts      integer NOT NULL DEFAULT 0,
	claimed_by    text,
	claimed_until timestamptz
);
CREATE INDEX cluster_outbox_role ON cluster_outbox (role, id);
`,
}

// SchemaVersion is the version this build migrates to.
func SchemaVersion() int { return len(migrations) }

// Migrate brings the cluster tables to SchemaVersion under an advisory lock,
// in one transaction: a half-applied version is never visible. A database
// already at a newer version than this build knows is an error (an older
// binary must not run against a newer schema).
func Migrate(ctx context.Context, pool *pgxpool.Pool) (err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("cluster schema: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.Background())
		}
	}()
	if _, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("cluster schema: lock: %w", err)
	}
	if _, err = tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cluster_schema (version integer NOT NULL)`); err != nil {
		return fmt.Errorf("cluster schema: %w", err)
	}
	var have int
	err = tx.QueryRow(ctx, "SELECT version FROM cluster_schema").Scan(&have)
	switch {
	case err == pgx.ErrNoRows:
		if _, err = tx.Exec(ctx, "INSERT INTO cluster_schema (version) VALUES (0)"); err != nil {
			return fmt.Errorf("cluster schema: %w", err)
		}
	case err != nil:
		return fmt.Errorf("cluster schema: read version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("cluster schema: the database is at version %d, this hermes knows up to %d: upgrade hermes on this machine", have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		if _, err = tx.Exec(ctx, migrations[v-1]); err != nil {
			return fmt.Errorf("cluster schema: migration %d: %w", v, err)
		}
	}
	if _, err = tx.Exec(ctx, "UPDATE cluster_schema SET version = $1", len(migrations)); err != nil {
		return fmt.Errorf("cluster schema: %w", err)
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("cluster schema: commit: %w", err)
	}
	return nil
}
