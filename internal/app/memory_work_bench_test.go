package app

import (
	"context"
	"sync"
	"testing"
	"time"

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

// BenchmarkMemoryProviderTurnVsFloor interleaves the two: each iteration runs
// one turn's provider work, then the floor's two round trips, on the same
// process, so load from elsewhere on the machine falls on both alike. It
// reports each one's time per iteration and their ratio (goal ≤ 1), and the
// part of the work on the turn's path (before the reply: on_turn_start,
// prefetch, and starting the background sync).
func BenchmarkMemoryProviderTurnVsFloor(b *testing.B) {
	c, done := benchChat(b, true)
	defer done()
	mgr := c.h.memory
	p, ok := c.h.MemoryProvider("benchmem")
	if !ok {
		b.Fatal("no provider")
	}
	ctx := context.Background()
	const sid = "bench-session"
	mgr.BeforeTurn(ctx, sid, 0, "warm up")
	mgr.AfterTurn(ctx, sid, "warm up", "ok")
	mgr.Flush()
	args := protocol.MemoryParams{Provider: p.ProviderName}
	remote, _ := mgr.External().(*memory.Remote)
	if remote == nil || len(remote.Inherited) == 0 {
		b.Fatal("the provider reported no inherited hooks")
	}
	inherited := remote.Inherited
	var work, path, floor, floorBG, allHooks time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if block := mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?"); block == "" {
			b.Fatal("no recall")
		}
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		path += time.Since(t0)
		mgr.Flush()
		t1 := time.Now()
		for range 2 {
			if _, err := p.Conn.Call(ctx, protocol.MethodMemoryIsAvailable, args); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		// The floor's shape of a turn: the second round trip in the
		// background and waited for, as AfterTurn's sync_turn is.
		if _, err := p.Conn.Call(ctx, protocol.MethodMemoryIsAvailable, args); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.Conn.Call(ctx, protocol.MethodMemoryIsAvailable, args)
		}()
		wg.Wait()
		t3 := time.Now()
		// Every hook called (on_turn_start and queue_prefetch too): what
		// the skip of inherited hooks saves.
		remote.Inherited = nil
		mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?")
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		mgr.Flush()
		remote.Inherited = inherited
		work, floor, floorBG, allHooks = work+t1.Sub(t0), floor+t2.Sub(t1), floorBG+t3.Sub(t2), allHooks+time.Since(t3)
	}
	b.ReportMetric(float64(work.Microseconds())/float64(b.N), "work-µs/turn")
	b.ReportMetric(float64(path.Microseconds())/float64(b.N), "on-path-µs/turn")
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "floor-µs/turn")
	b.ReportMetric(float64(floorBG.Microseconds())/float64(b.N), "floor-bg-µs/turn")
	b.ReportMetric(float64(allHooks.Microseconds())/float64(b.N), "all-hooks-µs/turn")
	b.ReportMetric(float64(work)/float64(floor), "ratio")
}

// fullBenchProvider overrides every per-turn hook.
const fullBenchProvider = benchProvider + `

class Full(Bench):
    def on_turn_start(self, turn_number, message, **kwargs):
        pass

    def queue_prefetch(self, query, *, session_id=""):
        pass


def register(ctx):
    ctx.register_memory_provider(Full())
`

// BenchmarkMemoryProviderFullTurnVsFloor is a provider overriding all four
// per-turn hooks: on_turn_start and prefetch on the path, then sync_turn and
// queue_prefetch in one memory.after_turn round trip (three in all), against
// the two-round-trip floor and against the four separate calls.
func BenchmarkMemoryProviderFullTurnVsFloor(b *testing.B) {
	c, done := benchChatWith(b, true, fullBenchProvider)
	defer done()
	mgr := c.h.memory
	p, ok := c.h.MemoryProvider("benchmem")
	if !ok {
		b.Fatal("no provider")
	}
	remote, _ := mgr.External().(*memory.Remote)
	if remote == nil || !remote.BatchesAfterTurn() {
		b.Fatal("the provider does not batch sync_turn and queue_prefetch")
	}
	ctx := context.Background()
	const sid = "bench-session"
	mgr.BeforeTurn(ctx, sid, 0, "warm up")
	mgr.AfterTurn(ctx, sid, "warm up", "ok")
	mgr.Flush()
	args := protocol.MemoryParams{Provider: p.ProviderName}
	var work, floor, separate time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?")
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		mgr.Flush()
		t1 := time.Now()
		for range 2 {
			if _, err := p.Conn.Call(ctx, protocol.MethodMemoryIsAvailable, args); err != nil {
				b.Fatal(err)
			}
		}
		t2 := time.Now()
		remote.AfterTurnCall = false
		mgr.BeforeTurn(ctx, sid, i+1, "which colour do I like?")
		mgr.AfterTurn(ctx, sid, "which colour do I like?", "teal")
		mgr.Flush()
		remote.AfterTurnCall = true
		work, floor, separate = work+t1.Sub(t0), floor+t2.Sub(t1), separate+time.Since(t2)
	}
	b.ReportMetric(float64(work.Microseconds())/float64(b.N), "work-µs/turn")
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "floor-µs/turn")
	b.ReportMetric(float64(separate.Microseconds())/float64(b.N), "separate-µs/turn")
	b.ReportMetric(float64(work)/float64(floor), "ratio")
}
