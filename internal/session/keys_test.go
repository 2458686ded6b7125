package session_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/session"
)

func TestSessionKeys(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	a := seed(t, s, session.Session{Source: "telegram"}, conversation[:2])
	b := seed(t, s, session.Session{Source: "telegram"}, nil)
	const key = "agent:main:telegram:dm:123456789"

	if _, err := s.LookupKey(ctx, key); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("LookupKey of an unbound key: %v, want ErrNotFound", err)
	}
	if err := s.BindKey(ctx, key, a, `{"platform":"telegram","chat_id":"123456789"}`); err != nil {
		t.Fatal(err)
	}
	e, err := s.LookupKey(ctx, key)
	if err != nil || e.SessionID != a || e.Origin != `{"platform":"telegram","chat_id":"123456789"}` {
		t.Fatalf("LookupKey = %+v, %v", e, err)
	}
	got, err := s.Get(ctx, a)
	if err != nil || got.Key != key {
		t.Fatalf("Get(a).Key = %q, %v; want the key", got.Key, err)
	}
	// /new: the key moves to the new session, the old one keeps its history.
	if err := s.BindKey(ctx, key, b, ""); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, x := range list {
		keys[x.ID] = x.Key
	}
	if keys[a] != "" || keys[b] != key {
		t.Fatalf("after rebinding, keys = %v; want only %s keyed", keys, b)
	}

	tests := []struct {
		name, key, id string
		wantNotFound  bool
	}{
		{"leading slash", "/etc/passwd", a, false},
		{"dot dot", "agent:main:../x", a, false},
		{"empty", "", a, false},
		{"unknown session", "agent:main:telegram:dm:1", "nope", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.BindKey(ctx, tc.key, tc.id, "")
			if err == nil {
				t.Fatal("BindKey accepted it")
			}
			if errors.Is(err, session.ErrNotFound) != tc.wantNotFound {
				t.Fatalf("BindKey: %v (ErrNotFound: %v, want %v)", err, errors.Is(err, session.ErrNotFound), tc.wantNotFound)
			}
		})
	}

	// Deleting the session drops its key.
	if err := s.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupKey(ctx, key); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("key of a deleted session: %v", err)
	}
}

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
	if _, err := db.Exec("DROP TABLE session_keys; DROP TABLE deliveries; DROP TABLE turn_usage; DROP INDEX sessions_parent; ALTER TABLE sessions DROP COLUMN parent_session_id; PRAGMA user_version = 1"); err != nil {
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

func TestDeliveryLedger(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	sent, _ := s.RecordDelivery(ctx, session.Delivery{SessionKey: "k", Platform: "telegram", Route: `{"chat_id":"1"}`, Text: "sent"})
	midSend, _ := s.RecordDelivery(ctx, session.Delivery{SessionKey: "k", Platform: "telegram", Text: "mid-send"})
	never, _ := s.RecordDelivery(ctx, session.Delivery{SessionKey: "k", Platform: "telegram", Text: "never tried"})
	worn, _ := s.RecordDelivery(ctx, session.Delivery{SessionKey: "k", Platform: "telegram", Text: "tried 3 times"})
	other, _ := s.RecordDelivery(ctx, session.Delivery{SessionKey: "k2", Platform: "discord", Text: "discord's"})
	_ = other
	for _, id := range []int64{sent, midSend, worn, worn, worn} {
		if err := s.DeliveryAttempt(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delivered(ctx, sent); err != nil {
		t.Fatal(err)
	}
	got, err := s.UnsentDeliveries(ctx, "telegram", now.Add(-24*time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != midSend || got[0].Attempts != 1 || got[1].ID != never || got[1].Attempts != 0 || got[1].Text != "never tried" {
		t.Fatalf("unsent %+v", got)
	}
	// A day later they are stale: pruned, not sent.
	now = now.Add(25 * time.Hour)
	if got, err := s.UnsentDeliveries(ctx, "telegram", now.Add(-24*time.Hour), 3); err != nil || len(got) != 0 {
		t.Fatalf("stale rows: %+v, %v", got, err)
	}
	if got, _ := s.UnsentDeliveries(ctx, "discord", time.Time{}, 3); len(got) != 0 {
		t.Fatalf("pruned rows came back: %+v", got)
	}
}

// KeyMessages reads what Messages reads for the session a key routes to; a
// key that routes nowhere, or to a session that is gone, is not found.
func TestKeyMessages(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	id := seed(t, s, session.Session{Source: "telegram"}, conversation)
	empty, _ := s.NewSession(ctx, session.Session{Source: "telegram"})
	for key, sid := range map[string]string{"k:full": id, "k:empty": empty} {
		if err := s.BindKey(ctx, key, sid, ""); err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got, msgs, err := s.KeyMessages(ctx, "k:full")
	if err != nil || got != id || !reflect.DeepEqual(msgs, want) {
		t.Fatalf("KeyMessages = %q, %+v, %v;\nwant %q, %+v", got, msgs, err, id, want)
	}
	if got, msgs, err := s.KeyMessages(ctx, "k:empty"); err != nil || got != empty || len(msgs) != 0 {
		t.Errorf("a session without messages: %q, %+v, %v", got, msgs, err)
	}
	if _, _, err := s.KeyMessages(ctx, "k:none"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("an unbound key: %v", err)
	}
	if err := s.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.KeyMessages(ctx, "k:full"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a key whose session was deleted: %v", err)
	}
}
