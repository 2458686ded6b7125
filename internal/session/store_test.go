package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

func open(t *testing.T, path string) *session.Store {
	t.Helper()
	s, err := session.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newStore(t *testing.T) *session.Store {
	return open(t, filepath.Join(t.TempDir(), "home dir", session.FileName))
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

func seed(t *testing.T, s *session.Store, sess session.Session, msgs []llm.Message) string {
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

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

	// Everything survives closing and reopening, and the file is private.
	s.Close()
	s2 := open(t, s.Path())
	again, err := s2.Messages(ctx, id)
	if err != nil || len(again) != 7 {
		t.Fatalf("reopened: %d messages, %v", len(again), err)
	}
	st, err := os.Stat(s.Path())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state.db mode %v, %v", st.Mode(), err)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

func TestDelete(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

func TestResolve(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
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

// TestConcurrentWriters: several handles (as several hermes processes would have)
// append at once, to their own sessions and to a shared one, without a lost write or
// a duplicated seq.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), session.FileName)
	const writers, each = 4, 25
	stores := make([]*session.Store, writers)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Add(1)
		go func() { // concurrent first Open: one migrates, the others wait for it
			defer wg.Done()
			s, err := session.Open(ctx, path)
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = s
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
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

func TestUnreadable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	s, err := session.Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A later hermes migrated it further.
	bumpVersion(t, newer, session.SchemaVersion+1)

	for _, tc := range []struct {
		path, want string
	}{
		{garbage, "session store " + garbage + " is unreadable: "},
		{newer, "session store " + newer + fmt.Sprintf(" has schema version %d, newer than this hermes knows (%d): upgrade hermes", session.SchemaVersion+1, session.SchemaVersion)},
		{dir, "session store " + dir + " is a directory"},
	} {
		_, err := session.Open(ctx, tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}

// bumpVersion sets PRAGMA user_version in the file header (offset 60, big-endian),
// as a newer hermes's migration would.
func bumpVersion(t *testing.T, path string, v int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	if _, err := f.WriteAt(b, 60); err != nil {
		t.Fatal(err)
	}
}

// TestCrashLosesNothing: a process killed right after appending (no Close, no
// shutdown) leaves every appended message in the store.
func TestCrashLosesNothing(t *testing.T) {
	if path := os.Getenv("HERMES_SESSION_CRASH_PATH"); path != "" {
		s, err := session.Open(context.Background(), path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		id, _ := s.NewSession(context.Background(), session.Session{ID: "crash"})
		for _, m := range conversation[:3] {
			if _, err := s.AppendMessage(context.Background(), id, m); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	path := filepath.Join(t.TempDir(), session.FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLosesNothing$")
	cmd.Env = append(os.Environ(), "HERMES_SESSION_CRASH_PATH="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := open(t, path)
	msgs, err := s.Messages(context.Background(), "crash")
	if err != nil || len(msgs) != 3 || len(msgs[2].ToolCalls) != 2 {
		t.Fatalf("after the crash: %d messages, %v", len(msgs), err)
	}
}

// TestConcurrentProcesses: three processes append at once, each to its own session
// and all to a shared one, through SQLite's file locks (WAL + busy timeout).
func TestConcurrentProcesses(t *testing.T) {
	const each = 30
	if path := os.Getenv("HERMES_SESSION_WRITER_PATH"); path != "" {
		ctx := context.Background()
		s, err := session.Open(ctx, path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		defer s.Close()
		me := os.Getenv("HERMES_SESSION_WRITER")
		id, err := s.NewSession(ctx, session.Session{ID: "own-" + me})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		for j := range each {
			for _, target := range []string{id, "shared"} {
				if _, err := s.AppendMessage(ctx, target, llm.Message{Role: "user", Content: fmt.Sprintf("%s %d", me, j)}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
			}
		}
		return
	}
	path := filepath.Join(t.TempDir(), session.FileName)
	s := open(t, path)
	if _, err := s.NewSession(context.Background(), session.Session{ID: "shared"}); err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcesses$")
		cmd.Env = append(os.Environ(), "HERMES_SESSION_WRITER_PATH="+path, fmt.Sprintf("HERMES_SESSION_WRITER=%d", i))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	ctx := context.Background()
	for i := range 3 {
		if msgs, err := s.Messages(ctx, fmt.Sprintf("own-%d", i)); err != nil || len(msgs) != each {
			t.Errorf("writer %d's session: %d messages, %v", i, len(msgs), err)
		}
	}
	hist, err := s.History(ctx, "shared")
	if err != nil || len(hist) != 3*each {
		t.Fatalf("shared: %d messages, %v", len(hist), err)
	}
	for i, m := range hist {
		if m.Seq != i+1 {
			t.Fatalf("seq %d at position %d", m.Seq, i)
		}
	}
}

func TestParentSessionChain(t *testing.T) {
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
