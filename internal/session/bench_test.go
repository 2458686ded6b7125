package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/storetest"
)

// BenchmarkAppendMessage is the cost of one committed message (each is in the WAL
// before AppendMessage returns, so a crash loses nothing): what every turn pays
// per message.
func BenchmarkAppendMessage(b *testing.B) {
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(b.TempDir(), session.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, err := s.NewSession(ctx, session.Session{})
	if err != nil {
		b.Fatal(err)
	}
	m := llm.Message{Role: "assistant", Content: "Two notes: oat milk and the bicycle. Anything else?"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.AppendMessage(ctx, id, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendMessageConcurrent is the same with 32 writers at once, each
// on a session of its own, as a gateway's concurrent turns write (their
// writes share commits).
func BenchmarkAppendMessageConcurrent(b *testing.B) {
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(b.TempDir(), session.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := make(chan string, 1024)
	for range cap(ids) {
		id, err := s.NewSession(ctx, session.Session{})
		if err != nil {
			b.Fatal(err)
		}
		ids <- id
	}
	m := llm.Message{Role: "assistant", Content: "Two notes: oat milk and the bicycle. Anything else?"}
	b.SetParallelism(16) // × GOMAXPROCS (2 here): 32 writers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := <-ids
		for pb.Next() {
			if _, err := s.AppendMessage(ctx, id, m); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSearch is one full-text query over 2,000 messages.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(b.TempDir(), session.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, _ := s.NewSession(ctx, session.Session{})
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	for i := range 2000 {
		c := words[i%8] + " " + words[(i/8)%8] + " message number " + words[(i/64)%8]
		if _, err := s.AppendMessage(ctx, id, llm.Message{Role: "user", Content: c}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Search(ctx, "charlie golf", 20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurn is the store's work per gateway message (storetest.BenchTurns),
// beside pgstore's BenchmarkTurn on PostgreSQL.
func BenchmarkTurn(b *testing.B) {
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := session.Open(context.Background(), filepath.Join(b.TempDir(), session.FileName))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			storetest.BenchTurns(b, s, writers)
		})
	}
}
