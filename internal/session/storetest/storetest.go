// Package storetest is the conformance suite of the session store: the same
// behavioural tests run against every engine (session's SQLite store and
// pgstore's PostgreSQL), so the two cannot drift apart.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// Harness opens stores of one engine.
type Harness struct {
	// New opens a fresh, empty store, closed when t ends.
	New func(t *testing.T) session.Backend
	// Reopen opens another handle on the store s, as another process would,
	// closed when t ends.
	Reopen func(t *testing.T, s session.Backend) session.Backend
}

// Run runs every case against the engine h opens.
func Run(t *testing.T, h Harness) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"RoundTrip", testRoundTrip},
		{"List", testList},
		{"Search", testSearch},
		{"SearchResultShape", testSearchResultShape},
		{"Delete", testDelete},
		{"NotFound", testNotFound},
		{"Resolve", testResolve},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ParentSessionChain", testParentSessionChain},
		{"SessionKeys", testSessionKeys},
		{"DeliveryLedger", testDeliveryLedger},
		{"KeyMessages", testKeyMessages},
		{"ActiveKeys", testActiveKeys},
		{"UsageAndTruncate", testUsageAndTruncate},
		{"SourceID", testSourceID},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

var conversation = []llm.Message{
	{Role: "system", Content: "You are Hermes."},
	{Role: "user", Content: "What is in notes.txt? It mentions the zebra crossing."},
	{Role: "assistant", ToolCalls: []llm.ToolCall{
		{ID: "call_a", Type: "function", Function: llm.FunctionCall{Name: "read_file", Arguments: `{"path":"notes.txt"}`}},
		{ID: "call_b", Type: "function", Function: llm.FunctionCall{Name: "terminal", Arguments: `{"command":"wc -l notes.txt"}`}},
	}},
	{Role: "tool", ToolCallID: "call_a", Name: "read_file", Content: "buy oat milk\nfix the bicycle"},
	{Role: "tool", ToolCallID: "call_b", Name: "terminal", Content: "2 notes.txt"},
	{Role: "assistant", Content: "Two notes: oat milk and the bicycle."},
}

func seed(t *testing.T, s session.Backend, sess session.Session, msgs []llm.Message) string {
	t.Helper()
	ctx := context.Background()
	id, err := s.NewSession(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		seq, err := s.AppendMessage(ctx, id, m)
		if err != nil {
			t.Fatal(err)
		}
		if seq != i+1 {
			t.Fatalf("seq %d, want %d", seq, i+1)
		}
	}
	return id
}

// testSearchResultShape: a hit carries its session's title, the message's
// role, seq and time, and a snippet around the match; limit bounds the hits.
func testSearchResultShape(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return at })
	id := seed(t, s, session.Session{Title: "Groceries"}, []llm.Message{
		{Role: "user", Content: "please remember that we are out of oat milk, eggs, flour, sugar, butter, salt and pepper today"},
		{Role: "assistant", Content: "Noted: oat milk."},
	})
	hits, err := s.Search(ctx, "oat", 0)
	if err != nil || len(hits) != 2 {
		t.Fatalf("Search = %+v, %v", hits, err)
	}
	for _, h := range hits {
		if h.SessionID != id || h.Title != "Groceries" || !h.CreatedAt.Equal(at) || !strings.Contains(h.Snippet, "[oat]") {
			t.Errorf("hit %+v", h)
		}
	}
	roles := map[string]int{}
	for _, h := range hits {
		roles[h.Role] = h.Seq
	}
	if roles["user"] != 1 || roles["assistant"] != 2 {
		t.Errorf("roles and seqs %v", roles)
	}
	long := hits[0]
	if long.Role != "user" {
		long = hits[1]
	}
	if len(long.Snippet) >= len("please remember that we are out of oat milk, eggs, flour, sugar, butter, salt and pepper today") {
		t.Errorf("snippet %q is the whole message", long.Snippet)
	}
	if one, err := s.Search(ctx, "oat", 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %+v, %v", one, err)
	}
	if _, err := s.Search(ctx, " \t", 0); !errors.Is(err, session.ErrNoSearchWord) {
		t.Errorf("blank term: %v", err)
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	id := seed(t, s, session.Session{Model: "fake/model", Source: "cli", Metadata: map[string]any{"cwd": "/tmp"}}, conversation)
	if len(id) != len("20261130_023801_ab12cd") || id[8] != '_' || id[15] != '_' {
		t.Errorf("id %q is not YYYYMMDD_HHMMSS_xxxxxx", id)
	}
	got, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(conversation) {
		t.Fatalf("%d messages", len(got))
	}
	for i := range got {
		a, b := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", conversation[i])
		if a != b {
			t.Errorf("message %d:\n got %s\nwant %s", i, a, b)
		}
	}
	for _, tc := range []session.ToolCall{
		{CallID: "call_a", Name: "read_file", Args: `{"path":"notes.txt"}`, Result: "buy oat milk", Status: "ok", Duration: 12 * time.Millisecond},
		{CallID: "call_b", Name: "terminal", Args: `{"command":"wc -l notes.txt"}`, Status: "error", Error: "exit 1"},
		{CallID: "unknown", Name: "patch", Args: `{`, Status: "error", Error: "invalid JSON"},
	} {
		if err := s.RecordToolCall(ctx, id, tc); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := s.ToolCalls(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].MessageSeq != 3 || calls[1].MessageSeq != 3 || calls[2].MessageSeq != 0 ||
		calls[0].DurationMS != 12 || calls[1].Error != "exit 1" || calls[0].Result != "buy oat milk" {
		t.Errorf("tool calls %+v", calls)
	}

	sess, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sess.MessageCount != 6 || !strings.HasPrefix(sess.Preview, "What is in notes.txt?") || sess.Model != "fake/model" ||
		sess.Source != "cli" || sess.Metadata["cwd"] != "/tmp" || sess.EndedAt != nil {
		t.Errorf("session %+v", sess)
	}
	if err := s.SetTitle(ctx, id, "  Notes  "); err != nil {
		t.Fatal(err)
	}
	if err := s.EndSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMetadata(ctx, id, map[string]any{"cwd": nil, "turns": 1}); err != nil {
		t.Fatal(err)
	}
	sess, _ = s.Get(ctx, id)
	if sess.Title != "Notes" || sess.EndedAt == nil || sess.Metadata["cwd"] != nil || sess.Metadata["turns"] != float64(1) {
		t.Errorf("after title/end/metadata: %+v", sess)
	}
	// Resuming reopens it.
	if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: "thanks"}); err != nil {
		t.Fatal(err)
	}
	sess, _ = s.Get(ctx, id)
	if sess.EndedAt != nil || sess.MessageCount != 7 {
		t.Errorf("after resume: %+v", sess)
	}

	// Everything is there for another handle (another process).
	s2 := h.Reopen(t, s)
	again, err := s2.Messages(ctx, id)
	if err != nil || len(again) != 7 {
		t.Fatalf("reopened: %d messages, %v", len(again), err)
	}
}

func testList(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	base := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 3 {
		ids = append(ids, seed(t, s, session.Session{CreatedAt: base.Add(time.Duration(i) * time.Minute)}, nil))
	}
	// Appending moves the oldest to the top.
	if _, err := s.AppendMessage(ctx, ids[0], llm.Message{Role: "user", Content: "hello again"}); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, x := range list {
		order = append(order, x.ID)
	}
	if want := []string{ids[0], ids[2], ids[1]}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if list[0].Preview != "hello again" || list[0].MessageCount != 1 {
		t.Errorf("first %+v", list[0])
	}
	if two, _ := s.List(ctx, 2); len(two) != 2 {
		t.Errorf("limit 2 gave %d", len(two))
	}
}

func testSearch(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	a := seed(t, s, session.Session{Title: "notes"}, conversation)
	b := seed(t, s, session.Session{Title: "other"}, []llm.Message{
		{Role: "user", Content: `a "quoted" phrase with AND, OR, NEAR and col:umn* syntax-like words`},
		{Role: "assistant", Content: "The zebra is striped."},
	})
	cases := []struct {
		term    string
		want    []string // session:seq
		snippet string
		wantErr bool
	}{
		{term: "zebra", want: []string{b + ":2", a + ":2"}, snippet: "[zebra]"},
		{term: "oat milk", want: []string{a + ":4", a + ":6"}},
		{term: "OAT", want: []string{a + ":4", a + ":6"}},
		{term: "bicycle milk", want: []string{a + ":4", a + ":6"}},
		{term: "bicycle zebra", want: nil},
		{term: `"quoted"`, want: []string{b + ":1"}},
		{term: "AND OR", want: []string{b + ":1"}},
		{term: "col:umn*", want: []string{b + ":1"}},
		{term: "syntax-like", want: []string{b + ":1"}},
		{term: "nothing-here", want: nil},
		{term: "!!! ***", want: nil},
		{term: "ZÉBRA", want: []string{b + ":2", a + ":2"}}, // case and accents are folded
		{term: "   ", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.term, func(t *testing.T) {
			hits, err := s.Search(ctx, tc.term, 0)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, fmt.Sprintf("%s:%d", h.SessionID, h.Seq))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("hits %v, want %v", got, tc.want)
			}
			seen := map[string]bool{}
			for _, g := range got {
				seen[g] = true
			}
			for _, w := range tc.want {
				if !seen[w] {
					t.Errorf("hits %v lack %s", got, w)
				}
			}
			if tc.snippet != "" && !strings.Contains(hits[0].Snippet, tc.snippet) {
				t.Errorf("snippet %q lacks %q", hits[0].Snippet, tc.snippet)
			}
		})
	}
}

func testDelete(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	a := seed(t, s, session.Session{}, conversation)
	b := seed(t, s, session.Session{}, conversation[:2])
	if err := s.RecordToolCall(ctx, a, session.ToolCall{CallID: "call_a", Name: "read_file"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, a); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if calls, _ := s.ToolCalls(ctx, a); len(calls) != 0 {
		t.Errorf("tool calls left: %v", calls)
	}
	hits, err := s.Search(ctx, "zebra", 0)
	if err != nil || len(hits) != 1 || hits[0].SessionID != b {
		t.Errorf("search after delete: %+v %v", hits, err)
	}
	if err := s.Delete(ctx, a); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), a) {
		t.Errorf("second delete: %v", err)
	}
	// The FTS index is still consistent with its content table.
	if msgs, _ := s.Messages(ctx, b); len(msgs) != 2 {
		t.Errorf("other session: %d messages", len(msgs))
	}
}

func testNotFound(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	for name, call := range map[string]func() error{
		"get":      func() error { _, err := s.Get(ctx, "nope"); return err },
		"messages": func() error { _, err := s.Messages(ctx, "nope"); return err },
		"append":   func() error { _, err := s.AppendMessage(ctx, "nope", llm.Message{Role: "user"}); return err },
		"tool":     func() error { return s.RecordToolCall(ctx, "nope", session.ToolCall{Name: "x"}) },
		"title":    func() error { return s.SetTitle(ctx, "nope", "x") },
		"end":      func() error { return s.EndSession(ctx, "nope") },
		"meta":     func() error { return s.SetMetadata(ctx, "nope", map[string]any{"a": 1}) },
		"delete":   func() error { return s.Delete(ctx, "nope") },
		"resolve":  func() error { _, err := s.Resolve(ctx, "nope"); return err },
	} {
		if err := call(); !errors.Is(err, session.ErrNotFound) || err.Error() != `no such session "nope"` {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func testResolve(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	for _, id := range []string{"20261130_010000_aaaaaa", "20261130_010000_aabbbb", "20261130_020000_cccccc"} {
		if _, err := s.NewSession(ctx, session.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]string{
		"20261130_020000_cccccc": "20261130_020000_cccccc",
		"20261130_02":            "20261130_020000_cccccc",
		"20261130_010000_aab":    "20261130_010000_aabbbb",
		"20261130_010000_aa":     "error: matches several sessions",
		"20261130_01____":        "error: no such session", // _ is literal, not a wildcard
		"%":                      "error: no such session",
	}
	for in, want := range cases {
		got, err := s.Resolve(ctx, in)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, want) && !strings.Contains(got, strings.TrimPrefix(want, "error: ")) {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
}

// testConcurrentWriters: several handles (as several hermes processes would have)
// append at once, to their own sessions and to a shared one, without a lost write or
// a duplicated seq.
func testConcurrentWriters(t *testing.T, h Harness) {
	ctx := context.Background()
	const writers, each = 4, 25
	first := h.New(t)
	stores := []session.Backend{first}
	for len(stores) < writers {
		stores = append(stores, h.Reopen(t, first))
	}
	var wg sync.WaitGroup
	shared, err := stores[0].NewSession(ctx, session.Session{})
	if err != nil {
		t.Fatal(err)
	}
	own := make([]string, writers)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := s.NewSession(ctx, session.Session{Source: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
				return
			}
			own[i] = id
			for j := range each {
				for _, target := range []string{id, shared} {
					if _, err := s.AppendMessage(ctx, target, llm.Message{Role: "user", Content: fmt.Sprintf("w%d m%d", i, j)}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	check := stores[0]
	for _, id := range own {
		if msgs, err := check.Messages(ctx, id); err != nil || len(msgs) != each {
			t.Errorf("session %s: %d messages, %v", id, len(msgs), err)
		}
	}
	msgs, err := check.Messages(ctx, shared)
	if err != nil || len(msgs) != writers*each {
		t.Fatalf("shared session: %d messages, %v", len(msgs), err)
	}
	hist, _ := check.History(ctx, shared)
	for i, m := range hist {
		if m.Seq != i+1 {
			t.Fatalf("seq %d at position %d", m.Seq, i)
		}
	}
}

func testParentSessionChain(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	parent, err := s.NewSession(ctx, session.Session{Model: "m", Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.NewSession(ctx, session.Session{Model: "m", Source: "cli", ParentID: parent})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, child)
	if err != nil || got.ParentID != parent {
		t.Fatalf("child %+v, %v", got, err)
	}
	list, err := s.List(ctx, 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v, %v", list, err)
	}
	for _, x := range list {
		if (x.ID == child) != (x.ParentID == parent) {
			t.Errorf("session %s has parent %q", x.ID, x.ParentID)
		}
	}
}
