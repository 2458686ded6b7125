package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/session"
)

// sqliteProvider is a real memory provider: sync_turn stores each turn in a
// SQLite file, prefetch recalls the stored user lines that share a word with
// the query. A marker file says a sync committed, so the test need not guess.
const sqliteProvider = `import os, sqlite3
from agent.memory_provider import MemoryProvider

HOME = os.environ.get("HERMES_HOME", ".")
DB = os.path.join(HOME, "sqlmem.db")


class SQLMem(MemoryProvider):
    name = "sqlmem"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        with open(os.path.join(HOME, "sqlmem.init"), "a") as f:
            f.write("%s %s\n" % (session_id, kwargs.get("platform")))
        with sqlite3.connect(DB) as c:
            c.execute("CREATE TABLE IF NOT EXISTS turns (user TEXT, assistant TEXT)")

    def get_tool_schemas(self):
        return []

    def prefetch(self, query, *, session_id=""):
        words = set(query.lower().split())
        with sqlite3.connect(DB) as c:
            rows = [u for (u,) in c.execute("SELECT user FROM turns")]
        hits = [u for u in rows if words & set(u.lower().split())]
        return "\n".join("remembered: " + h for h in hits)

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        with sqlite3.connect(DB) as c:
            c.execute("INSERT INTO turns VALUES (?, ?)", (user_content, assistant_content))
        with open(os.path.join(HOME, "sqlmem.synced"), "a") as f:
            f.write("1\n")


    def on_session_end(self, messages):
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        with open(os.path.join(HOME, "sqlmem.ended"), "a") as f:
            f.write("%d %s\n" % (len(messages), users[0] if users else ""))

    def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False, **kwargs):
        with open(os.path.join(HOME, "sqlmem.switched"), "a") as f:
            f.write("%s %s %s\n" % (parent_session_id, new_session_id, reset))


def register(ctx):
    ctx.register_memory_provider(SQLMem())
`

// The gateway uses the memory provider memory.provider selects, one for the
// process: a later turn's request carries the recall of an earlier turn (from
// another chat, so the provider is shared) in the <memory-context> block of
// the user message, and the stored history never holds it.
func TestGatewayMemoryProvider(t *testing.T) {
	g := startGatewayWith(t, "memory:\n  provider: sqlmem\n", "TELEGRAM_ALLOWED_USERS=1,2\n", map[string]string{
		"plugins/memory/sqlmem/plugin.yaml": "name: sqlmem\n",
		"plugins/memory/sqlmem/__init__.py": sqliteProvider,
		"memories/MEMORY.md":                "the gateway host is called lighthouse",
	}, llmtest.Reply{Content: "noted"}, llmtest.Reply{Content: "it is teal"})

	say(g, 1, "my favourite colour is teal")
	g.waitCalls(t, "sendMessage", 1)
	synced := filepath.Join(g.home, "sqlmem.synced")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(synced); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync_turn never ran after the first turn\ngateway log:\n%s", g.stderr.String())
		}
	}
	say(g, 2, "which colour do I like?")
	g.waitCalls(t, "sendMessage", 2)

	reqs := g.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := func(r llmtest.Request) string { return r.Messages[len(r.Messages)-1].Content }
	if strings.Contains(last(reqs[0]), "<memory-context>") {
		t.Errorf("first request has a recall with nothing stored: %q", last(reqs[0]))
	}
	second := last(reqs[1])
	if !strings.HasPrefix(second, "which colour do I like?") || !strings.Contains(second, "<memory-context>") ||
		!strings.Contains(second, "remembered: my favourite colour is teal") {
		t.Errorf("second request's user message %q: want the question and the provider's recall in a <memory-context> block", second)
	}
	// The built-in memory's snapshot is in the gateway's system prompt too.
	if sys := reqs[1].Messages[0]; sys.Role != "system" || !strings.Contains(sys.Content, "lighthouse") {
		t.Errorf("system prompt %q lacks the MEMORY.md snapshot", sys.Content)
	}
	// /new ends the session for the provider too, with its history.
	say(g, 1, "/new")
	g.waitCalls(t, "sendMessage", 3)
	ended, err := os.ReadFile(filepath.Join(g.home, "sqlmem.ended"))
	if err != nil || string(ended) != "2 my favourite colour is teal\n" {
		t.Errorf("on_session_end got %q (%v), want the first chat's user and assistant messages", ended, err)
	}
	switched, err := os.ReadFile(filepath.Join(g.home, "sqlmem.switched"))
	if err != nil || !strings.HasSuffix(string(switched), " True\n") {
		t.Errorf("on_session_switch got %q (%v), want a reset switch", switched, err)
	}
	g.stop(t)

	init, err := os.ReadFile(filepath.Join(g.home, "sqlmem.init"))
	if err != nil || strings.Count(string(init), " telegram\n") != 2 {
		t.Errorf("initialize calls %q (%v): want one per session, two sessions, platform telegram", init, err)
	}
	s, err := session.Open(context.Background(), session.Path(g.home))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := s.LookupKey(context.Background(), "agent:main:telegram:dm:2")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(context.Background(), k.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "memory-context") || strings.Contains(m.Content, "remembered:") {
			t.Errorf("stored %s message %q holds the recall", m.Role, m.Content)
		}
	}
}

// trimmerEngine is a real context engine in plugins/context_engine/trimmer/:
// past its threshold it keeps the system prompt and the last message, with a
// digest between.
const trimmerEngine = `from agent.context_engine import ContextEngine


class Trimmer(ContextEngine):
    name = "trimmer"
    threshold_percent = 0.5

    def update_from_response(self, usage):
        pass

    def should_compress(self, prompt_tokens=None):
        return (prompt_tokens or 0) >= self.threshold_tokens

    def compress(self, messages, current_tokens=None, focus_topic=None, force=False, memory_context=""):
        return [messages[0], {"role": "user", "content": "TRIMMER-DIGEST of %d messages" % (len(messages) - 2)}, messages[-1]]
`

// The gateway's turns are compacted by the engine context.engine selects, with
// the window model.context_length gives: once a conversation passes the
// threshold, the model receives the engine's transcript.
func TestGatewayContextEngine(t *testing.T) {
	big := func(tag string) string { return strings.Repeat(tag+" ", 2000/(len(tag)+1)) }
	g := startGatewayWith(t, "model:\n  context_length: 4000\ncontext:\n  engine: trimmer\n", "TELEGRAM_ALLOWED_USERS=1\n", map[string]string{
		"plugins/context_engine/trimmer/__init__.py": trimmerEngine,
	}, llmtest.Reply{Content: big("alpha-answer")}, llmtest.Reply{Content: big("bravo-answer")}, llmtest.Reply{Content: "done"})
	for i, text := range []string{big("ALPHA"), big("BRAVO"), "last question"} {
		say(g, 1, text)
		g.waitCalls(t, "sendMessage", i+1)
	}
	reqs := g.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3\n%s", len(reqs), g.stderr.String())
	}
	text := func(r llmtest.Request) string {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
		return b.String()
	}
	if strings.Contains(text(reqs[0]), "TRIMMER-DIGEST") {
		t.Errorf("the first request was compacted below the threshold")
	}
	// The second passes it (three ~500-token messages and the system prompt
	// against 2000): the engine's transcript replaces the first exchange.
	for i, r := range reqs[1:] {
		if !strings.Contains(text(r), "TRIMMER-DIGEST of ") || strings.Contains(text(r), "ALPHA ALPHA") {
			t.Errorf("request %d is not the engine's transcript:\n%.300s", i+2, text(r))
		}
	}
	if last := reqs[2].Messages; last[len(last)-1].Content != "last question" {
		t.Errorf("last request ends with %q", last[len(last)-1].Content)
	}
}

// waitFile waits until path holds want lines.
func waitFile(t *testing.T, g *gatewayRun, path string, lines int) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), "\n") >= lines {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %q, want %d lines\ngateway log:\n%s", path, b, lines, g.stderr.String())
		}
	}
}

// A session dropped from memory ends for the memory provider: evicted when
// idle past gateway.max_live_sessions, or live at shutdown (the run's context
// cancelled, as SIGTERM does).
func TestGatewaySessionEndOnEvictionAndShutdown(t *testing.T) {
	g := startGatewayWith(t, "memory:\n  provider: sqlmem\ngateway:\n  max_live_sessions: 1\n", "TELEGRAM_ALLOWED_USERS=1,2\n", map[string]string{
		"plugins/memory/sqlmem/plugin.yaml": "name: sqlmem\n",
		"plugins/memory/sqlmem/__init__.py": sqliteProvider,
	}, llmtest.Reply{Content: "one"}, llmtest.Reply{Content: "two"})
	ended := filepath.Join(g.home, "sqlmem.ended")

	say(g, 1, "first user speaks")
	g.waitCalls(t, "sendMessage", 1)
	if _, err := os.Stat(ended); err == nil {
		t.Fatal("on_session_end ran with one live session")
	}
	// A second conversation evicts the first (idle): its history is ended.
	say(g, 2, "second user speaks")
	g.waitCalls(t, "sendMessage", 2)
	if got := waitFile(t, g, ended, 1); got != "2 first user speaks\n" {
		t.Errorf("after the eviction on_session_end got %q, want the first conversation", got)
	}
	// Shutdown ends the live one.
	g.stop(t)
	if got := waitFile(t, g, ended, 2); got != "2 first user speaks\n2 second user speaks\n" {
		t.Errorf("after shutdown on_session_end got %q, want the second conversation too", got)
	}
}

// A compaction in the gateway keeps the session chain as chat does: the
// compacted transcript continues in a child session (parent_session_id set)
// and the key routes to it, so the conversation read again from state.db
// (here after an eviction) is the compacted one.
func TestGatewayCompactionKeepsTheSessionChain(t *testing.T) {
	big := func(tag string) string { return strings.Repeat(tag+" ", 2000/(len(tag)+1)) }
	g := startGatewayWith(t, "model:\n  context_length: 4000\ncontext:\n  engine: trimmer\ngateway:\n  max_live_sessions: 1\n", "TELEGRAM_ALLOWED_USERS=1,2\n", map[string]string{
		"plugins/context_engine/trimmer/__init__.py": trimmerEngine,
	}, llmtest.Reply{Content: big("alpha-answer")}, llmtest.Reply{Content: "bravo"}, llmtest.Reply{Content: "other"}, llmtest.Reply{Content: "done"})
	say(g, 1, big("ALPHA"))
	g.waitCalls(t, "sendMessage", 1)
	say(g, 1, big("BRAVO")) // past the threshold: compacted
	g.waitCalls(t, "sendMessage", 2)
	say(g, 2, "someone else") // evicts chat 1's conversation
	g.waitCalls(t, "sendMessage", 3)
	say(g, 1, "last question") // read again from state.db
	g.waitCalls(t, "sendMessage", 4)
	g.stop(t)

	reqs := g.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4\n%s", len(reqs), g.stderr.String())
	}
	var last strings.Builder
	for _, m := range reqs[3].Messages {
		last.WriteString(m.Content + "\n")
	}
	if !strings.Contains(last.String(), "TRIMMER-DIGEST") || strings.Contains(last.String(), "ALPHA ALPHA") {
		t.Errorf("the resumed conversation is not the compacted one:\n%.400s", last.String())
	}
	s, err := session.Open(context.Background(), session.Path(g.home))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := s.LookupKey(context.Background(), "agent:main:telegram:dm:1")
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.Get(context.Background(), k.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentID == "" {
		t.Fatalf("the key routes to session %s, which has no parent: the compaction did not move the key", child.ID)
	}
	parent, err := s.Get(context.Background(), child.ParentID)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := s.Messages(context.Background(), parent.ID)
	var history strings.Builder
	for _, m := range pm {
		history.WriteString(m.Content + "\n")
	}
	if err != nil || !strings.Contains(history.String(), "ALPHA ALPHA") || !strings.Contains(history.String(), "BRAVO BRAVO") {
		t.Errorf("parent session %s has %d messages (%v): want the uncompacted history", parent.ID, len(pm), err)
	}
	if k.Origin == "" || !strings.Contains(k.Origin, "telegram") {
		t.Errorf("the key's origin %q was lost in the rebinding", k.Origin)
	}
}

// A compaction continues the conversation in a child session: the memory
// provider is told with on_session_switch (parent id, child id, no reset)
// and is not initialised again for the child.
func TestGatewayCompactionSwitchesTheMemorySession(t *testing.T) {
	big := func(tag string) string { return strings.Repeat(tag+" ", 2000/(len(tag)+1)) }
	g := startGatewayWith(t, "model:\n  context_length: 4000\ncontext:\n  engine: trimmer\nmemory:\n  provider: sqlmem\n", "TELEGRAM_ALLOWED_USERS=1\n", map[string]string{
		"plugins/context_engine/trimmer/__init__.py": trimmerEngine,
		"plugins/memory/sqlmem/plugin.yaml":          "name: sqlmem\n",
		"plugins/memory/sqlmem/__init__.py":          sqliteProvider,
	}, llmtest.Reply{Content: big("alpha-answer")}, llmtest.Reply{Content: "bravo"}, llmtest.Reply{Content: "charlie"})
	say(g, 1, big("ALPHA"))
	g.waitCalls(t, "sendMessage", 1)
	say(g, 1, big("BRAVO")) // past the threshold: compacted into a child session
	g.waitCalls(t, "sendMessage", 2)
	say(g, 1, "after the compaction")
	g.waitCalls(t, "sendMessage", 3)
	g.stop(t)

	s, err := session.Open(context.Background(), session.Path(g.home))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := s.LookupKey(context.Background(), "agent:main:telegram:dm:1")
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.Get(context.Background(), k.SessionID)
	if err != nil || child.ParentID == "" {
		t.Fatalf("session %s (%v) has no parent: no compaction happened\n%s", k.SessionID, err, g.stderr.String())
	}
	// Each compaction is one switch, parent to child; the last child is the
	// session the chat's key routes to.
	switched, err := os.ReadFile(filepath.Join(g.home, "sqlmem.switched"))
	lines := strings.Split(strings.TrimSuffix(string(switched), "\n"), "\n")
	if err != nil || lines[len(lines)-1] != child.ParentID+" "+child.ID+" False" {
		t.Errorf("on_session_switch calls %q (%v), want the last to be %s → %s, no reset", switched, err, child.ParentID, child.ID)
	}
	for i := 1; i < len(lines); i++ {
		if prev, cur := strings.Fields(lines[i-1]), strings.Fields(lines[i]); len(prev) < 2 || len(cur) < 1 || cur[0] != prev[1] {
			t.Errorf("on_session_switch calls %q do not form one chain", switched)
		}
	}
	init, err := os.ReadFile(filepath.Join(g.home, "sqlmem.init"))
	if err != nil || strings.Count(string(init), "\n") != 1 {
		t.Errorf("initialize calls %q (%v): want one, for the parent session only", init, err)
	}
}
