package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/session"
)

// The pairing state as session.DocStore: a row per document in
// pairing_docs; the lock is a transaction-scoped advisory lock, so it is
// released by the commit or by the connection's end (a process that dies
// holding it holds it no longer).

var _ session.DocStore = (*Store)(nil)

// pairingLock is the advisory lock key of the pairing documents ("pairing").
const pairingLock int64 = 0x70616972696e67

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

type docs struct {
	s *Store
	q querier
}

// LockedDocs runs fn in one transaction holding the pairing lock: what it
// writes is committed together when fn returns nil, and not at all otherwise.
func (s *Store) LockedDocs(ctx context.Context, fn func(session.DocTx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pairingLock); err != nil {
			return s.wrap("locking the pairing state", err)
		}
		return fn(txDocs{docs{s, tx}, tx})
	})
}

// Docs reads the documents without the lock.
func (s *Store) Docs() session.DocReader { return docs{s, s.pool} }

// DocWhere names a document's row.
func (s *Store) DocWhere(name string) string {
	return fmt.Sprintf("pairing document %q in %s", name, s.where)
}

func (d docs) Read(ctx context.Context, name string) ([]byte, error) {
	var data []byte
	err := d.q.QueryRow(ctx, `SELECT data FROM pairing_docs WHERE name = $1`, name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if data == nil && err == nil {
		data = []byte{}
	}
	return data, d.s.wrap("reading the pairing state", err)
}

func (d docs) Names(ctx context.Context) ([]string, error) {
	rows, err := d.q.Query(ctx, `SELECT name FROM pairing_docs`)
	if err != nil {
		return nil, d.s.wrap("reading the pairing state", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, d.s.wrap("reading the pairing state", err)
}

type txDocs struct {
	docs
	tx pgx.Tx
}

func (d txDocs) Write(ctx context.Context, name string, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	_, err := d.tx.Exec(ctx, `INSERT INTO pairing_docs (name, data, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`, name, data, ms(d.s.now()))
	return d.s.wrap("writing the pairing state", err)
}
