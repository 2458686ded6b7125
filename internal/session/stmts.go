package session

import (
	"context"
	"database/sql"
)

// The store's hot statements are prepared once and kept (database/sql holds
// one per connection): SQLite parsing and planning each statement anew was
// a seventh of a busy gateway's CPU. The cache is keyed by the query text,
// which is always a constant of this package, so it stays small.

// prep returns query prepared, from the cache or now.
func (s *Store) prep(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// queryRow is db.QueryRowContext through the cache.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.prep(ctx, query)
	if err != nil {
		return s.db.QueryRowContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// query is db.QueryContext through the cache.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.prep(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// txExec is tx.ExecContext through the cache.
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.prep(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// txQueryRow is tx.QueryRowContext through the cache.
func (s *Store) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	st, err := s.prep(ctx, query)
	if err != nil {
		return tx.QueryRowContext(ctx, query, args...)
	}
	return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// closeStmts closes the cached statements (before the database).
func (s *Store) closeStmts() {
	s.stmts.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
}
