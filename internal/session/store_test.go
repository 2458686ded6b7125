package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
