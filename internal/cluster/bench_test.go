package cluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkClaimDone: b.N items over 1000 conversations are queued first;
// then 1, 2 or 4 workers (goroutines of one process) claim and finish them.
// Besides ns/op it reports items/s and the server's own execution time per
// item for the claim, the done and (measured while queueing) the enqueue
// statement, read from pg_stat_statements.
func BenchmarkClaimDone(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			url := server(b).DB(b)
			ctx := context.Background()
			n := open(b, Config{URL: url, MaxConns: 8})
			if _, err := n.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
				b.Fatal(err)
			}
			resetStats(ctx, b, n)
			const keys = 1000
			for start := 0; start < b.N; start += 500 {
				batch := &pgx.Batch{}
				for i := start; i < min(start+500, b.N); i++ {
					batch.Queue(enqueueSQL, "bench", strconv.Itoa(i), "chat"+strconv.Itoa(i%keys), []byte("{}"))
				}
				if err := n.pool.SendBatch(ctx, batch).Close(); err != nil {
					b.Fatal(err)
				}
			}
			enq := stats(ctx, b, n)
			resetStats(ctx, b, n)
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Load() > 0 {
						it, err := n.Claim(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						if it == nil {
							continue // the rest are held by the other workers
						}
						if err := n.Done(ctx, it); err != nil {
							b.Error(err)
							return
						}
						left.Add(-1)
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			st := stats(ctx, b, n)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "items/s")
			per := func(m map[string]float64, k string) float64 { return m[k] * 1000 / float64(b.N) }
			b.ReportMetric(per(st, "claim"), "claim-db-µs/item")
			b.ReportMetric(per(st, "done"), "done-db-µs/item")
			b.ReportMetric(per(enq, "enqueue"), "enqueue-db-µs/item")
			// Claims per item above 1: claims that lost their candidate to
			// another worker and looked again, or found nothing free.
			b.ReportMetric(st["claim-calls"]/float64(b.N), "claims/item")
		})
	}
}

func resetStats(ctx context.Context, b *testing.B, n *Node) {
	if _, err := n.pool.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		b.Fatal(err)
	}
}

// stats sums pg_stat_statements' execution time (ms) in this database by
// which of the cluster's statements it was, and their calls (key-calls).
func stats(ctx context.Context, b *testing.B, n *Node) map[string]float64 {
	rows, err := n.pool.Query(ctx, `
SELECT CASE WHEN query LIKE '%INSERT INTO cluster_leases%' THEN 'claim'
	WHEN query LIKE '%DELETE FROM cluster_queue%' THEN 'done'
	WHEN query LIKE '%INSERT INTO cluster_seen%' THEN 'enqueue'
	ELSE 'other' END, sum(total_exec_time), sum(calls)
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
GROUP BY 1`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var k string
		var v float64
		var calls int64
		if err := rows.Scan(&k, &v, &calls); err != nil {
			b.Fatal(err)
		}
		out[k] = v
		out[k+"-calls"] = float64(calls)
	}
	return out
}

// BenchmarkMarkSeen is the cost a cluster adds to each Discord message it
// accepts (the dedupe behind the catch-up): one INSERT … ON CONFLICT DO
// NOTHING round trip, a fresh id each time. ns/op is the caller's wait;
// seen-db-µs/msg the server's own execution time (pg_stat_statements).
func BenchmarkMarkSeen(b *testing.B) {
	url := server(b).DB(b)
	ctx := context.Background()
	n := open(b, Config{URL: url})
	if _, err := n.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Fatal(err)
	}
	resetStats(ctx, b, n)
	base := time.Now().UnixNano()
	b.ResetTimer()
	for i := range b.N {
		fresh, err := n.MarkSeen(ctx, "discord", strconv.FormatInt(base+int64(i), 10))
		if err != nil || !fresh {
			b.Fatalf("mark seen: %v, %v", fresh, err)
		}
	}
	b.StopTimer()
	st := stats(ctx, b, n)
	b.ReportMetric(st["enqueue"]*1000/float64(b.N), "seen-db-µs/msg")
}

// BenchmarkEnqueueOne is what the owner of Discord's connection waits for
// per accepted message: one Enqueue at a time (its event worker is serial,
// so a conversation's messages keep their order), a fresh id each time, 100
// conversations. ns/op is the caller's wait, which bounds the messages one
// owner accepts per second; enqueue-db-µs/msg the server's execution time.
func BenchmarkEnqueueOne(b *testing.B) {
	url := server(b).DB(b)
	ctx := context.Background()
	n := open(b, Config{URL: url})
	if _, err := n.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Fatal(err)
	}
	resetStats(ctx, b, n)
	base := time.Now().UnixNano()
	b.ResetTimer()
	for i := range b.N {
		queued, err := n.Enqueue(ctx, "discord", strconv.FormatInt(base+int64(i), 10), "chat"+strconv.Itoa(i%100), []byte(`{"v":1,"kind":"message"}`))
		if err != nil || !queued {
			b.Fatalf("enqueue: %v, %v", queued, err)
		}
	}
	b.StopTimer()
	st := stats(ctx, b, n)
	b.ReportMetric(st["enqueue"]*1000/float64(b.N), "enqueue-db-µs/msg")
}
