package app

import (
	"context"
	"testing"

	"github.com/hermes-go/hermes/internal/memory"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// The turn benchmarks (memory_bench_test.go) cannot resolve a few round trips
// inside a whole turn. These measure only what the provider adds to a turn,
// through the real Python provider and the real plugin runtime, beside the
// floor: two plain round trips to the same plugin process.

// BenchmarkMemoryProviderTurnWork is the provider work of one turn:
// BeforeTurn (on_turn_start, prefetch) on the turn path, then AfterTurn
// (sync_turn, queue_prefetch) and waiting for it to finish. The test
// provider overrides prefetch and sync_turn only, as most do.
func BenchmarkMemoryProviderTurnWork(b *testing.B) {
	c, done := benchChat(b, true)
	defer done()
	mgr := c.h.memory
	ctx := context.Background()
	const sid = "bench-session"
	mgr.BeforeTurn(ctx, sid, 0, "warm up") // initialize() once, as the first turn does
	mgr.AfterTurn(ctx, sid, "warm up", "ok")
	mgr.Flush()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if block := mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?"); block == "" {
			b.Fatal("no recall")
		}
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		mgr.Flush()
	}
}

// BenchmarkMemoryProviderFloor is two plain plugin round trips
// (memory.is_available) to the same provider process: the bound the turn
// work is held to.
func BenchmarkMemoryProviderFloor(b *testing.B) {
	c, done := benchChat(b, true)
	defer done()
	p, ok := c.h.MemoryProvider("benchmem")
	if !ok {
		b.Fatal("no provider")
	}
	ctx := context.Background()
	args := protocol.MemoryParams{Provider: p.ProviderName}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for range 2 {
			if _, err := p.Conn.Call(ctx, protocol.MethodMemoryIsAvailable, args); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkMemoryProviderTurnWorkAllHooks is TurnWork with every per-turn
// hook called, as before the bridge reported the inherited ones: the cost
// the skip saves.
func BenchmarkMemoryProviderTurnWorkAllHooks(b *testing.B) {
	c, done := benchChat(b, true)
	defer done()
	mgr := c.h.memory
	r, ok := mgr.External().(*memory.Remote)
	if !ok || !r.Inherited["on_turn_start"] || !r.Inherited["queue_prefetch"] || r.Inherited["prefetch"] || r.Inherited["sync_turn"] {
		b.Fatalf("the bridge reported inherited hooks %v; want on_turn_start and queue_prefetch, not prefetch or sync_turn", r.Inherited)
	}
	r.Inherited = nil
	ctx := context.Background()
	const sid = "bench-session"
	mgr.BeforeTurn(ctx, sid, 0, "warm up")
	mgr.AfterTurn(ctx, sid, "warm up", "ok")
	mgr.Flush()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?")
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		mgr.Flush()
	}
}
