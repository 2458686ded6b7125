package session

import (
	"context"
	"database/sql"
)

// Search indexing. A message is indexed (messages_fts) by the transaction that
// stores it, just before its commit, by one statement for all the messages
// the commit adds: FTS5 flushes what it holds at the start of each statement
// of a transaction, so a trigger per row wrote a segment per message and
// spent a tenth of a busy gateway's CPU writing and merging them. Every
// committed message is indexed: the writes that delete or edit messages
// (whose triggers take the old text out of the index) run before the
// commit's new messages are added.

// indexMark is the highest message id before this transaction's writes.
func (s *Store) indexMark(ctx context.Context, tx *sql.Tx) (int64, error) {
	var id int64
	err := s.txQueryRow(ctx, tx, `SELECT coalesce(max(id), 0) FROM messages`).Scan(&id)
	return id, err
}

// index adds the messages stored after from to the search index. The
// transaction holds the write lock, so they are this transaction's.
func (s *Store) index(ctx context.Context, tx *sql.Tx, from int64) error {
	_, err := s.txExec(ctx, tx, `INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages WHERE id > ?`, from)
	return err
}
