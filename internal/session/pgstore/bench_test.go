package pgstore_test

import (
	"fmt"
	"testing"

	"github.com/hermes-go/hermes/internal/session/storetest"
)

// BenchmarkTurn is the store's work per gateway message on PostgreSQL (a
// throwaway cluster on this machine, over its Unix socket), the workload of
// session's BenchmarkTurn on state.db.
func BenchmarkTurn(b *testing.B) {
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openURL(b, db(b))
			storetest.BenchTurns(b, s, writers)
		})
	}
}

// BenchmarkSearch is one full-text query over 2,000 messages (session's
// BenchmarkSearch on state.db).
func BenchmarkSearch(b *testing.B) {
	s := openURL(b, db(b))
	storetest.BenchSearch(b, s)
}
