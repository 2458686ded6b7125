package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// conversation is a system prompt and n user/assistant exchanges, each
// message about size characters long.
func conversation(n, size int) []llm.Message {
	ms := []llm.Message{{Role: llm.RoleSystem, Content: "system prompt"}}
	for i := range n {
		ms = append(ms, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("question %d %s", i, strings.Repeat("q", size))},
			llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("answer %d %s", i, strings.Repeat("a", size))})
	}
	return ms
}

// withTool appends one exchange in which the model read a big file.
func withTool(ms []llm.Message, id string, size int) []llm.Message {
	return append(ms,
		llm.Message{Role: llm.RoleUser, Content: "read it " + id},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Type: "function", Function: llm.FunctionCall{Name: "read_file", Arguments: `{"path":"x"}`}}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: "read_file", Content: strings.Repeat("file data ", size/10)},
		llm.Message{Role: llm.RoleAssistant, Content: "read " + id})
}

func newCompressor(t *testing.T, srv *llmtest.Server, cfg agent.CompressorConfig) *agent.Compressor {
	t.Helper()
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "aux", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Client = client
	return agent.NewCompressor(cfg)
}

func TestCompressorShouldCompress(t *testing.T) {
	for _, tc := range []struct {
		name          string
		contextLength int
		threshold     float64
		tokens        int
		want          bool
		wantThreshold int
	}{
		{"below half of the window", 10_000, 0, 4_999, false, 5_000},
		{"at half of the window", 10_000, 0, 5_000, true, 5_000},
		{"custom threshold", 10_000, 0.8, 7_000, false, 8_000},
		{"custom threshold reached", 10_000, 0.8, 8_100, true, 8_000},
		{"unknown window uses 128k", 0, 0, 63_000, false, 64_000},
		{"threshold above 1 is the default", 1_000, 3, 500, true, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := agent.NewCompressor(agent.CompressorConfig{ContextLength: tc.contextLength, Threshold: tc.threshold})
			if got := c.ThresholdTokens(); got != tc.wantThreshold {
				t.Errorf("threshold_tokens %d, want %d", got, tc.wantThreshold)
			}
			if got := c.ShouldCompress(context.Background(), tc.tokens); got != tc.want {
				t.Errorf("ShouldCompress(%d) = %v, want %v", tc.tokens, got, tc.want)
			}
		})
	}
}

func TestCompressorCompress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		msgs     []llm.Message
		opts     agent.CompressOptions
		lastN    int
		summary  bool // one auxiliary call is made
		check    func(t *testing.T, in, out []llm.Message, prompt string)
		wantSame bool
	}{
		{name: "short conversation: nothing between head and tail", msgs: conversation(2, 10), lastN: 2, wantSame: true},
		{name: "clearing old tool output is enough", lastN: 2,
			msgs: append(withTool(withTool(conversation(1, 10), "c1", 6000), "c2", 6000), conversation(1, 10)[1:]...),
			check: func(t *testing.T, in, out []llm.Message, _ string) {
				if len(out) != len(in) {
					t.Fatalf("%d messages, want %d (pruning keeps them all)", len(out), len(in))
				}
				cleared := 0
				for _, m := range out {
					if m.Role == llm.RoleTool && m.Content == agent.PrunedToolOutput {
						cleared++
					}
				}
				if cleared != 2 {
					t.Errorf("%d tool results cleared, want 2", cleared)
				}
			}},
		{name: "the middle is summarised; head and tail are kept", msgs: conversation(20, 400), lastN: 4, summary: true,
			check: func(t *testing.T, in, out []llm.Message, prompt string) {
				for i := range 3 {
					if out[i].Content != in[i].Content {
						t.Errorf("head message %d changed: %q", i, out[i].Content)
					}
				}
				if !agent.IsSummary(out[3].Content) || !strings.Contains(out[3].Content, "SUMMARY TEXT") {
					t.Fatalf("message 3 is not the summary: %.120q", out[3].Content)
				}
				last := in[len(in)-1]
				if out[len(out)-1].Content != last.Content || len(out) >= len(in) {
					t.Errorf("tail lost: %d messages", len(out))
				}
				if strings.Contains(prompt, "question 0 ") || !strings.Contains(prompt, "question 2 ") || strings.Contains(prompt, "answer 19 ") {
					t.Errorf("the summariser saw the wrong turns:\n%.300s", prompt)
				}
			}},
		{name: "a tool call and its result stay together in the tail", lastN: 1, summary: true,
			msgs: withTool(conversation(10, 400), "c9", 100),
			check: func(t *testing.T, _, out []llm.Message, _ string) {
				for i, m := range out {
					if m.Role == llm.RoleTool && (i == 0 || len(out[i-1].ToolCalls) == 0) {
						t.Fatalf("tool result %d without its call: roles %s", i, roles(out))
					}
				}
				if !hasUserMessage(out, "read it c9") {
					t.Errorf("the latest user message is gone: %s", roles(out))
				}
			}},
		{name: "a later compaction folds the previous summary in", lastN: 2, summary: true,
			msgs: append(append(conversation(1, 10), llm.Message{Role: llm.RoleUser, Content: agent.SummaryPrefix + "\n\nOLD SUMMARY about kiwis"}),
				conversation(10, 400)[2:]...),
			check: func(t *testing.T, _, out []llm.Message, prompt string) {
				if !strings.Contains(prompt, "PREVIOUS SUMMARY:\nOLD SUMMARY about kiwis") {
					t.Errorf("the previous summary is not folded in:\n%.400s", prompt)
				}
				if strings.Count(prompt, "[CONTEXT COMPACTION") != 0 {
					t.Errorf("the old summary went in as a turn")
				}
				n := 0
				for _, m := range out {
					if agent.IsSummary(m.Content) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d summaries after the compaction, want 1", n)
				}
			}},
		{name: "/compress focus forces a summary of a small conversation", lastN: 2, summary: true,
			msgs: conversation(4, 10), opts: agent.CompressOptions{Force: true, Focus: "the kiwi database", MemoryContext: "user likes kiwis"},
			check: func(t *testing.T, _, _ []llm.Message, prompt string) {
				if !strings.Contains(prompt, `FOCUS TOPIC: "the kiwi database"`) || !strings.Contains(prompt, "user likes kiwis") {
					t.Errorf("focus or memory context missing:\n%s", prompt)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("SUMMARY TEXT"))
			c := newCompressor(t, srv, agent.CompressorConfig{ContextLength: 4000, ProtectLastN: tc.lastN})
			out, err := c.Compress(context.Background(), tc.msgs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if (len(reqs) == 1) != tc.summary || len(reqs) > 1 {
				t.Fatalf("%d auxiliary calls, want summary=%v", len(reqs), tc.summary)
			}
			prompt := ""
			if len(reqs) == 1 {
				prompt = reqs[0].Messages[len(reqs[0].Messages)-1].Content
				if reqs[0].Model != "aux" {
					t.Errorf("summary model %q", reqs[0].Model)
				}
			}
			if tc.wantSame && roles(out) != roles(tc.msgs) {
				t.Errorf("changed: %s", roles(out))
			}
			if tc.check != nil {
				tc.check(t, tc.msgs, out, prompt)
			}
		})
	}
}

func hasUserMessage(ms []llm.Message, text string) bool {
	for _, m := range ms {
		if m.Role == llm.RoleUser && strings.HasSuffix(m.Content, text) {
			return true
		}
	}
	return false
}

func TestCompressorFailureCooldown(t *testing.T) {
	srv := llmtest.NewServer(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := newCompressor(t, srv, agent.CompressorConfig{ContextLength: 4000, ProtectLastN: 2, Now: func() time.Time { return now }})
	msgs := withTool(conversation(12, 400), "c1", 3000)
	ctx := context.Background()
	attempt := func(force bool) (calls int, err error) {
		before := len(srv.Requests())
		out, err := c.Compress(ctx, msgs, agent.CompressOptions{Force: force})
		if out == nil {
			t.Fatalf("no partial result: %v", err)
		}
		return len(srv.Requests()) - before, err
	}
	for _, step := range []struct {
		advance time.Duration
		reply   *llmtest.Reply
		force   bool
		calls   int
		errHas  string
	}{
		{0, &llmtest.Reply{Status: 500, Error: "aux down"}, false, 1, "summaries pause for 1m0s"},
		{30 * time.Second, nil, false, 0, "failed recently"},
		{31 * time.Second, &llmtest.Reply{Status: 500, Error: "aux down"}, false, 1, "summaries pause for 5m0s"},
		{4 * time.Minute, nil, false, 0, "failed recently"},
		{0, &llmtest.Reply{Status: 500, Error: "aux down"}, true, 1, "summaries pause for 15m0s"}, // /compress ignores the cooldown
		{20 * time.Minute, &llmtest.Reply{Content: "better now"}, false, 1, ""},
		{0, &llmtest.Reply{Status: 500, Error: "aux down"}, false, 1, "summaries pause for 1m0s"}, // a success resets the ladder
	} {
		now = now.Add(step.advance)
		if step.reply != nil {
			srv.Enqueue(*step.reply)
		}
		calls, err := attempt(step.force)
		if calls != step.calls {
			t.Fatalf("at %s: %d calls, want %d", now.Format("15:04:05"), calls, step.calls)
		}
		if step.errHas == "" && err != nil || step.errHas != "" && (err == nil || !strings.Contains(err.Error(), step.errHas)) {
			t.Fatalf("at %s: error %v, want %q", now.Format("15:04:05"), err, step.errHas)
		}
	}
}

// forkRecorder is a store that can continue a session in a child.
type forkRecorder struct {
	memRecorder
	forks []string // parent ids
}

func (r *forkRecorder) ForkSession(_ context.Context, parent string) (string, error) {
	r.forks = append(r.forks, parent)
	return fmt.Sprintf("child-%d", len(r.forks)), nil
}

type lines struct{ progress []string }

func (l *lines) Text(string)         {}
func (l *lines) Progress(s string)   { l.progress = append(l.progress, s) }
func (l *lines) joined() string      { return strings.Join(l.progress, "\n") }
func (l *lines) has(sub string) bool { return strings.Contains(l.joined(), sub) }

// failingEngine is a context engine that is always due and always fails.
type failingEngine struct{ panics bool }

func (failingEngine) Name() string                                  { return "broken" }
func (failingEngine) UpdateModel(context.Context, string, int)      {}
func (failingEngine) UpdateFromResponse(context.Context, llm.Usage) {}
func (e failingEngine) ShouldCompress(context.Context, int) bool {
	if e.panics {
		panic("engine bug")
	}
	return true
}
func (failingEngine) Compress(context.Context, []llm.Message, agent.CompressOptions) ([]llm.Message, error) {
	return nil, fmt.Errorf("ValueError: no")
}

func TestAgentCompactsBeforeTheModelCall(t *testing.T) {
	srv := llmtest.NewServer(t)
	rec := &forkRecorder{}
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	out := &lines{}
	eng := agent.NewCompressor(agent.CompressorConfig{Client: client, Model: "aux", ContextLength: 2000, ProtectLastN: 2})
	ag := agent.New(agent.Options{Client: client, Model: "fake", Recorder: rec, SystemPrompt: "sys", Output: out,
		Engine: eng, AutoCompress: true})
	s := ag.ResumeSession(context.Background(), "parent", conversation(8, 300))
	srv.Enqueue(llmtest.Text("THE SUMMARY"), llmtest.Text("the answer"))
	turn, err := ag.Run(context.Background(), s, "latest question")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != "aux" || turn.Final != "the answer" {
		t.Fatalf("%d requests (first model %q), final %q", len(reqs), reqs[0].Model, turn.Final)
	}
	sent := reqs[1].Messages
	if len(sent) >= 18 || !agent.IsSummary(sent[3].Content) || !strings.HasSuffix(sent[len(sent)-1].Content, "latest question") {
		t.Fatalf("the model was sent %d messages: %s", len(sent), roles(sent))
	}
	if s.ID != "child-1" || len(rec.forks) != 1 || rec.forks[0] != "parent" {
		t.Errorf("session %q, forks %v", s.ID, rec.forks)
	}
	if !out.has("context compressed (compressor)") || !out.has("continued in session child-1 (parent parent)") {
		t.Errorf("progress: %s", out.joined())
	}
	// The parent got the user message; the child holds the compacted
	// transcript (ending with it), then the turn's answer.
	if n := len(rec.msgs); n != 1+len(sent)+1 || rec.msgs[n-1].Content != "the answer" {
		t.Errorf("recorded %d messages: %s", n, roles(rec.msgs))
	}
}

func TestAgentEngineFaultsLeaveTheTurnUncompressed(t *testing.T) {
	for _, eng := range []failingEngine{{}, {panics: true}} {
		srv := llmtest.NewServer(t)
		client, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
		out := &lines{}
		ag := agent.New(agent.Options{Client: client, Model: "fake", Output: out, Engine: eng, AutoCompress: true})
		s := ag.ResumeSession(context.Background(), "s", conversation(3, 10))
		srv.Enqueue(llmtest.Text("fine"))
		turn, err := ag.Run(context.Background(), s, "q")
		if err != nil || turn.Final != "fine" {
			t.Fatalf("turn %v, %v", turn, err)
		}
		if got := len(srv.LastRequest(t).Messages); got != 8 {
			t.Errorf("%d messages sent, want all 8", got)
		}
		want := "context engine broken: ValueError: no; the turn goes on uncompressed"
		if eng.panics {
			want = "should_compress failed: engine bug"
		}
		if !out.has(want) {
			t.Errorf("progress %q, want %q", out.joined(), want)
		}
	}
}

// forkTurnRecorder is a forkRecorder that tells the turn's own user message
// apart, with the session it was recorded in.
type forkTurnRecorder struct {
	forkRecorder
	turn []string // "session: content"
}

func (r *forkTurnRecorder) AppendTurnMessage(_ context.Context, id string, m llm.Message) error {
	r.turn = append(r.turn, id+": "+m.Content)
	return nil
}

// A compaction mid-turn carries the turn's identity into the child: its copy
// of the turn's user message is recorded as the turn's too (the gateway
// stores it with the update it answers, so a redelivery finds it there).
func TestCompactionKeepsTheTurnMessage(t *testing.T) {
	srv := llmtest.NewServer(t)
	rec := &forkTurnRecorder{}
	client, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	eng := agent.NewCompressor(agent.CompressorConfig{Client: client, Model: "aux", ContextLength: 2000, ProtectLastN: 2})
	ag := agent.New(agent.Options{Client: client, Model: "fake", Recorder: rec, SystemPrompt: "sys", Engine: eng, AutoCompress: true})
	s := ag.ResumeSession(context.Background(), "parent", conversation(8, 300))
	srv.Enqueue(llmtest.Text("THE SUMMARY"), llmtest.Text("the answer"))
	if _, err := ag.Run(context.Background(), s, "latest question"); err != nil {
		t.Fatal(err)
	}
	if len(rec.turn) != 2 || rec.turn[0] != "parent: latest question" || !strings.HasPrefix(rec.turn[1], "child-1: ") ||
		!strings.HasSuffix(rec.turn[1], "latest question") {
		t.Fatalf("turn messages recorded: %q", rec.turn)
	}
	for _, m := range rec.msgs {
		if m.Role == "user" && strings.HasSuffix(m.Content, "latest question") {
			t.Errorf("the turn's message was also recorded as an ordinary one: %q", m.Content)
		}
	}
}
