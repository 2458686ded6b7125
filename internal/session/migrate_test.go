package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// TestMigrateFromVersion5: a state.db written before messages had a
// source_id (schema version 5) opens, is migrated to the current version,
// keeps its messages (with no source) and takes new ones with one.
func TestMigrateFromVersion5(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), session.FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range session.Migrations[:5] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', 1, 1)`,
		`INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('old', 1, 'user', 'hello', 1)`,
		`PRAGMA user_version = 5`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s := open(t, path)
	if v, err := s.Version(ctx); err != nil || v != session.SchemaVersion || v < 6 {
		t.Fatalf("Version = %d, %v; want %d", v, err, session.SchemaVersion)
	}
	if _, err := s.AppendFrom(ctx, "old", llm.Message{Role: "user", Content: "again"}, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, "old")
	if err != nil || len(hist) != 2 {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	if got := fmt.Sprint(hist[0].Content, "|", hist[0].SourceID, "|", hist[1].SourceID); got != "hello||telegram:7" {
		t.Errorf("after the migration: %s", got)
	}
}
