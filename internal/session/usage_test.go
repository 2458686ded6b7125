package session_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
)

func TestUsageMigratesFromSchema4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), session.FileName)
	s := open(t, path)
	id := seed(t, s, session.Session{Source: "cli"}, conversation[:2])
	s.Close()
	// A store of schema 4 (before turn_usage) migrates forward, keeping what it holds.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE turn_usage; ALTER TABLE messages DROP COLUMN source_id; PRAGMA user_version = 4"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = open(t, path)

	cost := 0.0042
	for _, u := range []session.TurnUsage{
		{MessageSeq: 1, Model: "m", APICalls: 1, PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
		{MessageSeq: 3, Model: "m", APICalls: 2, PromptTokens: 30, CompletionTokens: 7, TotalTokens: 37, CostUSD: &cost},
	} {
		if err := s.RecordUsage(ctx, id, u); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Usage(ctx, id)
	if err != nil || len(got) != 2 || got[0].CostUSD != nil || got[1].CostUSD == nil || *got[1].CostUSD != cost || got[1].PromptTokens != 30 {
		t.Fatalf("Usage = %+v, %v", got, err)
	}

	if seq, err := s.LastUserSeq(ctx, id); err != nil || seq != 2 {
		t.Fatalf("LastUserSeq = %d, %v; want 2", seq, err)
	}
	// Truncating from seq 2 drops the second message and the usage of seq 3.
	if err := s.TruncateFrom(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Messages after TruncateFrom = %d, %v; want 1", len(msgs), err)
	}
	got, _ = s.Usage(ctx, id)
	if len(got) != 1 || got[0].MessageSeq != 1 {
		t.Fatalf("Usage after TruncateFrom = %+v", got)
	}
	// The next message takes the freed seq.
	seq, err := s.AppendMessage(ctx, id, conversation[1])
	if err != nil || seq != 2 {
		t.Fatalf("AppendMessage = %d, %v; want seq 2", seq, err)
	}
}
