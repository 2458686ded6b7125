package storetest

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// BenchTurns is the store's work for one gateway message, the same on every
// engine: the user's message and the answer appended, the turn's usage, the
// answer recorded in the delivery ledger and marked sent. writers > 1 runs
// that many conversations at once (a gateway's concurrent turns), each on a
// session and key of its own.
func BenchTurns(b *testing.B, s session.Backend, writers int) {
	ctx := context.Background()
	ids := make(chan string, writers)
	for i := range writers {
		id, err := s.NewSession(ctx, session.Session{Source: "telegram"})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.BindKey(ctx, fmt.Sprintf("agent:main:telegram:dm:%d", i), id, `{"chat_id":"1"}`); err != nil {
			b.Fatal(err)
		}
		ids <- id
	}
	user := llm.Message{Role: "user", Content: "What is on my shopping list for the weekend?"}
	answer := llm.Message{Role: "assistant", Content: "Two notes: oat milk and the bicycle. Anything else?"}
	var update atomic.Int64
	turn := func(id string) error {
		// The user's message carries the update it answers, as a cluster
		// turn's does (one more column, no more statements).
		seq, err := s.AppendFrom(ctx, id, user, "telegram:"+strconv.FormatInt(update.Add(1), 10))
		if err != nil {
			return err
		}
		if _, err := s.AppendMessage(ctx, id, answer); err != nil {
			return err
		}
		u := session.TurnUsage{MessageSeq: seq, Model: "m", APICalls: 1, PromptTokens: 120, CompletionTokens: 12, TotalTokens: 132}
		if err := s.RecordUsage(ctx, id, u); err != nil {
			return err
		}
		d, err := s.RecordDelivery(ctx, session.Delivery{SessionKey: id, Platform: "telegram", Route: `{"chat_id":"1"}`, Text: answer.Content, Attempts: 1})
		if err != nil {
			return err
		}
		return s.Delivered(ctx, d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if writers <= 1 {
		id := <-ids
		for b.Loop() {
			if err := turn(id); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism((writers + 1) / 2) // × GOMAXPROCS (2 here)
	b.RunParallel(func(pb *testing.PB) {
		id := <-ids
		for pb.Next() {
			if err := turn(id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchSearch is one full-text query over 2,000 messages (the workload of
// session's BenchmarkSearch).
func BenchSearch(b *testing.B, s session.Backend) {
	ctx := context.Background()
	id, err := s.NewSession(ctx, session.Session{})
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	for i := range 2000 {
		c := words[i%8] + " " + words[(i/8)%8] + " message number " + words[(i/64)%8]
		if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: c}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		hits, err := s.Search(ctx, "charlie golf", 20)
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) != 20 {
			b.Fatalf("%d hits, want 20", len(hits))
		}
	}
}
