package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The harness itself: a cluster starts, a fresh database takes writes, the
// data survives a crash-restart, and pg_stat_statements is loaded.
func TestClusterLifecycle(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := c.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (id int primary key, v text)",
		"INSERT INTO t VALUES (1, 'one')",
		"CREATE EXTENSION pg_stat_statements",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = conn.Close(ctx)
	if err := c.Restart("immediate"); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != "one" {
		t.Fatalf("after restart: %q, %v", v, err)
	}
	var calls int64
	if err := conn.QueryRow(ctx, "SELECT coalesce(sum(calls),0)::bigint FROM pg_stat_statements").Scan(&calls); err != nil {
		t.Fatalf("pg_stat_statements: %v", err)
	}
	other := c.DB(t)
	if other == url {
		t.Fatalf("two databases share a URL: %s", url)
	}
}
