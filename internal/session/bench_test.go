package session_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// BenchmarkAppendMessage is the cost of one committed message (the store syncs each
// one to disk so a crash loses nothing): what every turn pays per message.
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
