package session_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
)

// A state.db written by the previous schema (no key index) is migrated and
// keeps its sessions.
func TestSessionKeysMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), session.FileName)
	s := open(t, path)
	id := seed(t, s, session.Session{Source: "cli"}, conversation[:2])
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE session_keys; DROP TABLE deliveries; DROP TABLE turn_usage; DROP INDEX sessions_parent; ALTER TABLE sessions DROP COLUMN parent_session_id; ALTER TABLE messages DROP COLUMN source_id; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = open(t, path)
	if err := s.BindKey(ctx, "agent:main:telegram:dm:1", id, ""); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	if got, err := s.Get(ctx, id); err != nil || got.MessageCount != 2 || got.Key != "agent:main:telegram:dm:1" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
}
