package cli_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// BenchmarkGatewayCluster is the cluster test's throughput with 1, 2 and 3
// gateway processes: b.N updates (b.N/10 chats of 10 messages) through the
// webhook proxy, from the first push to the last answer, and the database's
// own execution time per message from pg_stat_statements (every statement
// of the run: queue, leases, session store, ledger). Run with a fixed count:
//
//	go test ./internal/cli -run XXX -bench GatewayCluster -benchtime 3000x
func BenchmarkGatewayCluster(b *testing.B) {
	for _, procs := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			c := startGatewayCluster(b, procs, 2*b.N, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			conn, err := pgx.Connect(ctx, c.dbURL)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
				b.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')"); err != nil {
				b.Fatal(err)
			}
			chats := max(b.N/10, 1)
			b.ResetTimer()
			for i := range b.N {
				c.tg.PushText(telegramfake.Message{ChatID: int64(10000 + i%chats), UserID: int64(10000 + i%chats), Text: fmt.Sprintf("m%d", i)})
			}
			if _, err := c.tg.WaitCalls(ctx, "sendMessage", b.N); err != nil {
				b.Fatalf("waiting for %d answers: %v", b.N, err)
			}
			b.StopTimer()
			var dbMS float64
			var calls int64
			if err := conn.QueryRow(ctx, `SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
				WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&dbMS, &calls); err != nil {
				b.Fatal(err)
			}
			rows, err := conn.Query(ctx, `SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 70), calls, total_exec_time FROM pg_stat_statements
				WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 6`)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
				var q string
				var n int64
				var ms float64
				if err := rows.Scan(&q, &n, &ms); err != nil {
					b.Fatal(err)
				}
				b.Logf("%8.1f µs/msg %6d calls  %s", ms*1000/float64(b.N), n, q)
			}
			rows.Close()
			// WAL flushes: with HERMES_PGTEST_FSYNC=on each is a disk sync, and
			// group commit shows as fewer syncs than commits.
			var walSyncs int64
			var walSyncMS float64
			if err := conn.QueryRow(ctx, `SELECT wal_sync, wal_sync_time FROM pg_stat_wal`).Scan(&walSyncs, &walSyncMS); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(walSyncs)/float64(b.N), "wal-syncs/msg")
			b.ReportMetric(walSyncMS*1000/float64(b.N), "wal-sync-µs/msg")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(dbMS*1000/float64(b.N), "db-µs/msg")
			b.ReportMetric(float64(calls)/float64(b.N), "statements/msg")
		})
	}
}
