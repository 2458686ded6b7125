package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// The gateway's side of the store: session keys, the delivery ledger,
// conversations by key, usage and turn identities.

func testSessionKeys(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
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

func testDeliveryLedger(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
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
	for _, tc := range []struct {
		id   int64
		want bool
	}{{sent, true}, {midSend, false}, {never, false}, {sent + 1000, false}} {
		if got, err := s.DeliverySent(ctx, tc.id); err != nil || got != tc.want {
			t.Fatalf("DeliverySent(%d) = %v, %v; want %v", tc.id, got, err, tc.want)
		}
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

// testKeyMessages: KeyMessages reads what Messages reads for the session a key routes to; a
// key that routes nowhere, or to a session that is gone, is not found.
func testKeyMessages(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
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

// testActiveKeys: the keys of a platform's sessions written to since a
// moment, most recent first and bounded; other platforms', older sessions'
// and unkeyed sessions are not listed.
func testActiveKeys(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	mk := func(source, key string, at time.Time) string {
		t.Helper()
		now = at
		id := seed(t, s, session.Session{Source: source}, conversation[:1])
		if key != "" {
			if err := s.BindKey(ctx, key, id, `{"platform":"`+source+`","chat_id":"`+key+`"}`); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	base := now
	old := mk("discord", "d:old", base.Add(-3*time.Hour))
	mk("discord", "d:a", base.Add(-30*time.Minute))
	mk("discord", "d:b", base.Add(-10*time.Minute))
	mk("telegram", "t:a", base.Add(-5*time.Minute))
	mk("discord", "", base.Add(-time.Minute))
	since := base.Add(-time.Hour)
	got, err := s.ActiveKeys(ctx, "discord", since, 10)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.Key)
		if e.SessionID == "" || !strings.Contains(e.Origin, e.Key) {
			t.Errorf("entry %+v lacks its session or origin", e)
		}
	}
	if strings.Join(keys, ",") != "d:b,d:a" {
		t.Fatalf("active discord keys = %v, want d:b,d:a", keys)
	}
	if got, _ := s.ActiveKeys(ctx, "discord", since, 1); len(got) != 1 || got[0].Key != "d:b" {
		t.Errorf("limit 1: %+v", got)
	}
	// A message moves an old session into the window.
	now = base
	if _, err := s.AppendMessage(ctx, old, llm.Message{Role: "user", Content: "back again"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ActiveKeys(ctx, "discord", since, 10); len(got) != 3 || got[0].Key != "d:old" {
		t.Errorf("after a new message in the old session: %+v", got)
	}
}

func testUsageAndTruncate(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	id := seed(t, s, session.Session{Source: "cli"}, conversation[:2])

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

// testSourceID: a message appended with the delivery it answers keeps that
// identity (History's SourceID, seen by another handle too); messages
// appended without one, or with "", have none; Messages is unchanged by it.
func testSourceID(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	id := seed(t, s, session.Session{Source: "telegram"}, conversation[:1])
	same := llm.Message{Role: "user", Content: "again"}
	for _, src := range []string{"telegram:41", "", "telegram:42"} {
		if _, err := s.AppendFrom(ctx, id, same, src); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "assistant", Content: "twice"}); err != nil {
		t.Fatal(err)
	}
	hist, err := h.Reopen(t, s).History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range hist {
		got = append(got, m.SourceID)
	}
	if want := []string{"", "telegram:41", "", "telegram:42", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SourceIDs %q, want %q", got, want)
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil || len(msgs) != 5 || !reflect.DeepEqual(msgs[1], same) || !reflect.DeepEqual(msgs[3], same) {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	if _, err := s.AppendFrom(ctx, "no-such-session", same, "telegram:43"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("AppendFrom to no session: %v", err)
	}
}
