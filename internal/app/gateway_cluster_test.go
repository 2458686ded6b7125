package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/pgstore"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// resumeCase is one redelivered item against what its first delivery left
// in the store: the stored messages (a user message's SourceID says which
// update it answers), the update's text, and what must happen.
type resumeCase struct {
	name   string
	stored []session.Message
	update string // the redelivered update's id
	text   string // its text as decoded
	done   bool   // the stored answer is resent, no turn runs
	resend string // that answer
	cont   bool   // the turn continues from the stored message
}

func userFrom(src, text string) session.Message {
	return session.Message{SourceID: src, Message: llm.Message{Role: "user", Content: text}}
}

func said(text string) session.Message {
	return session.Message{Message: llm.Message{Role: "assistant", Content: text}}
}

// resumeCases are the three states a redelivery can find, and the two the
// old heuristic (comparing the last user message's text with the update's)
// misjudged: the same text sent twice in a row, and a text the gateway
// rewrote before storing it.
var resumeCases = []resumeCase{
	{name: "answered", stored: []session.Message{userFrom("telegram:1", "hi"), said("hello")},
		update: "1", text: "hi", done: true, resend: "hello"},
	{name: "stored, not answered", stored: []session.Message{userFrom("telegram:1", "hi"), said("hello"), userFrom("telegram:2", "and then?")},
		update: "2", text: "and then?", cont: true},
	{name: "nothing stored", stored: []session.Message{userFrom("telegram:1", "hi"), said("hello")},
		update: "2", text: "and then?"},
	// The heuristic took the earlier "yes"'s answer for this one's and sent it again.
	{name: "same text twice in a row", stored: []session.Message{userFrom("telegram:3", "yes"), said("noted: yes")},
		update: "4", text: "yes"},
	// The heuristic found no match and ran the turn again: the message
	// stored twice, the model asked twice.
	{name: "rewritten text, answered", stored: []session.Message{userFrom("telegram:5", "look\n\n[The user sent a photo: cat.jpg]"), said("a cat")},
		update: "5", text: "look", done: true, resend: "a cat"},
	{name: "rewritten text, not answered", stored: []session.Message{userFrom("telegram:6", "[Replying to: \"a cat\"]\n\nwhose?")},
		update: "6", text: "whose?", cont: true},
}

func seedTurns(t *testing.T, s session.Backend, key string, msgs []session.Message) string {
	t.Helper()
	ctx := context.Background()
	id, err := s.NewSession(ctx, session.Session{Model: "m", Source: "telegram"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BindKey(ctx, key, id, `{"platform":"telegram","chat_id":"5"}`); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := s.AppendFrom(ctx, id, m.Message, m.SourceID); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// TestFindTurn: what a redelivery finds in the store, by the update's
// identity, on both engines.
func TestFindTurn(t *testing.T) {
	ctx := context.Background()
	engines := map[string]func(t *testing.T) session.Backend{
		"sqlite": func(t *testing.T) session.Backend {
			st, err := session.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) session.Backend {
			st, err := pgstore.Open(ctx, pgtest.Start(t).DB(t), pgstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			st := engines[engine](t)
			for i, tc := range resumeCases {
				key := fmt.Sprintf("agent:main:telegram:dm:%d", i)
				seedTurns(t, st, key, tc.stored)
				got, err := findTurn(ctx, st, key, "telegram:"+tc.update)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				answer := ""
				if got.answer != nil {
					answer = got.answer.Content
				}
				if got.stored != (tc.done || tc.cont) || answer != tc.resend || got.later {
					t.Errorf("%s: found %+v (answer %q)", tc.name, got, answer)
				}
			}
			// A later delivery's turn after an unanswered one: nothing to resume.
			seedTurns(t, st, "k:later", []session.Message{userFrom("telegram:8", "a"), userFrom("telegram:9", "b"), said("b!")})
			if got, err := findTurn(ctx, st, "k:later", "telegram:8"); err != nil || !got.stored || !got.later || got.answer != nil {
				t.Errorf("a turn followed by another: %+v, %v", got, err)
			}
			if got, err := findTurn(ctx, st, "k:unbound", "telegram:1"); err != nil || got.stored {
				t.Errorf("an unbound key: %+v, %v", got, err)
			}
		})
	}
}

// TestResumeItem runs each redelivery through a real gateway (its agent,
// state.db, the loopback Bot API and model): a finished turn's answer is
// sent again marked recovered and the model is not asked; an unfinished
// one continues without its message stored twice; the rest run as new.
func TestResumeItem(t *testing.T) {
	ctx := context.Background()
	g := startGateway(t, "", "GATEWAY_ALLOW_ALL_USERS=true\n", llmtest.Reply{Content: "fresh answer", Repeat: len(resumeCases)})
	gw := &Gateway{runner: g.gw.runner, engine: g.gw.engine, cluster: &gatewayCluster{log: slog.New(slog.DiscardHandler)}}
	st := g.gw.engine.store
	for i, tc := range resumeCases {
		t.Run(tc.name, func(t *testing.T) {
			chat := strconv.Itoa(100 + i)
			src := platform.Source{Platform: "telegram", ChatID: chat, UserID: chat, ChatType: platform.ChatDM}
			ev := platform.Event{Kind: platform.EventMessage, Source: src, Text: tc.text, Delivery: "telegram:" + tc.update}
			key := gw.runner.SessionKey("telegram", ev)
			id := seedTurns(t, st, key, tc.stored)
			sentBefore, asked := len(g.tg.Calls("sendMessage")), len(g.model.Requests())

			done, err := gw.resumeItem(ctx, &cluster.Item{SessionKey: key, Platform: "telegram", UpdateID: tc.update, Attempt: 2}, &ev)
			if err != nil || done != tc.done || ev.Stored != tc.cont {
				t.Fatalf("resumeItem = %v, %v, Stored %v; want %v, Stored %v", done, err, ev.Stored, tc.done, tc.cont)
			}
			if !done {
				if err := gw.runner.HandleQueued(ctx, "telegram", ev); err != nil {
					t.Fatal(err)
				}
			}
			var sent []string
			for _, c := range g.tg.Calls("sendMessage")[sentBefore:] {
				if c.Params["chat_id"] == chat {
					sent = append(sent, c.Params["text"])
				}
			}
			hist, err := st.History(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			users := map[string]int{}
			for _, m := range hist {
				if m.Role == "user" {
					users[m.Content]++
				}
			}
			reqs := g.model.Requests()[asked:]
			if tc.done {
				if len(reqs) != 0 || len(sent) != 1 || !strings.Contains(sent[0], "Recovered reply") || !strings.HasSuffix(sent[0], tc.resend) {
					t.Fatalf("the model asked %d times, sent %q; want the stored answer once, marked recovered", len(reqs), sent)
				}
				if len(hist) != len(tc.stored) {
					t.Errorf("the store went from %d to %d messages", len(tc.stored), len(hist))
				}
				return
			}
			if len(reqs) != 1 || len(sent) != 1 || sent[0] != "fresh answer" {
				t.Fatalf("the model asked %d times, sent %q; want one new turn", len(reqs), sent)
			}
			last := hist[len(hist)-1]
			if last.Role != "assistant" || last.Content != "fresh answer" {
				t.Errorf("the store ends with %+v", last)
			}
			stored := tc.stored[len(tc.stored)-1].Content
			if tc.cont {
				// The stored message once, in the store and in what the model was sent.
				n := 0
				for _, m := range reqs[0].Messages {
					if m.Role == "user" && strings.Contains(m.Content, stored) {
						n++
					}
				}
				if users[stored] != 1 || n != 1 || len(hist) != len(tc.stored)+1 {
					t.Errorf("%q stored %d times, sent to the model %d times; history %d messages", stored, users[stored], n, len(hist))
				}
				return
			}
			// A new turn: the update's message stored once more, with its identity.
			if hist[len(hist)-2].Content != tc.text || hist[len(hist)-2].SourceID != "telegram:"+tc.update {
				t.Errorf("the new turn's message stored as %+v", hist[len(hist)-2])
			}
		})
	}
}

func TestClusterConfig(t *testing.T) {
	cfg := map[string]any{"gateway": map[string]any{"cluster": map[string]any{"lease_ttl": 6, "poll": 2, "max_attempts": 3}}}
	c, err := clusterConfig(cfg, "postgres://hermes@db/hermes", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "postgres://hermes:s3cret@db/hermes" || c.LeaseTTL.Seconds() != 6 || c.Poll.Seconds() != 2 || c.MaxAttempts != 3 {
		t.Fatalf("config %+v", c)
	}
	// A password already in the URL stays.
	if c, _ := clusterConfig(nil, "postgres://hermes:inurl@db/hermes", "other"); c.URL != "postgres://hermes:inurl@db/hermes" {
		t.Errorf("URL %s", c.URL)
	}
	if _, err := clusterConfig(map[string]any{"gateway": map[string]any{"cluster": map[string]any{"lease_ttl": -1}}}, "postgres://db/h", ""); err == nil {
		t.Error("a negative lease_ttl was taken")
	}
}
