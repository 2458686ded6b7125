package cli_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// The pgcluster script command runs a throwaway PostgreSQL server for the
// script (pgtest: initdb in a temporary directory, a Unix socket only):
//
//	pgcluster start        # a cluster and an empty database; sets $PG_URL
//	pgcluster sql QUERY    # runs QUERY on that database; prints each row's columns, tab-separated
//
// Guard a script with [!postgres] skip: the condition holds when the server
// binaries are installed, and always under CI=true (where a missing server
// must fail the script, not skip it).
func init() {
	scriptCmds["pgcluster"] = cmdPGCluster
	scriptConds["postgres"] = func() bool {
		_, err := pgtest.Binaries()
		return err == nil || os.Getenv("CI") == "true"
	}
}

var (
	pgMu       sync.Mutex
	pgClusters = map[*testscript.TestScript]string{} // the script's database URL
)

func cmdPGCluster(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: pgcluster start | sql QUERY")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pgMu.Lock()
	url := pgClusters[ts]
	pgMu.Unlock()
	switch args[0] {
	case "start":
		if url != "" {
			ts.Fatalf("pgcluster start: already running")
		}
		c, err := pgtest.New()
		if err != nil {
			ts.Fatalf("pgcluster: %v", err)
		}
		ts.Defer(c.Remove)
		if err := c.Start(); err != nil {
			ts.Fatalf("pgcluster: %v", err)
		}
		u, err := c.CreateDB(ctx, "hermes")
		if err != nil {
			ts.Fatalf("pgcluster: create database: %v", err)
		}
		pgMu.Lock()
		pgClusters[ts] = u
		pgMu.Unlock()
		ts.Defer(func() {
			pgMu.Lock()
			delete(pgClusters, ts)
			pgMu.Unlock()
		})
		ts.Setenv("PG_URL", u)
	case "sql":
		if url == "" {
			ts.Fatalf("pgcluster sql: no cluster; run pgcluster start first")
		}
		if len(args) != 2 {
			ts.Fatalf("usage: pgcluster sql QUERY")
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			ts.Fatalf("pgcluster sql: %v", err)
		}
		defer func() { _ = conn.Close(context.Background()) }()
		rows, err := conn.Query(ctx, args[1])
		if err != nil {
			ts.Fatalf("pgcluster sql: %v", err)
		}
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				ts.Fatalf("pgcluster sql: %v", err)
			}
			cols := make([]string, len(vals))
			for i, v := range vals {
				cols[i] = fmt.Sprint(v)
			}
			fmt.Fprintln(ts.Stdout(), strings.Join(cols, "\t"))
		}
		if err := rows.Err(); err != nil {
			ts.Fatalf("pgcluster sql: %v", err)
		}
	default:
		ts.Fatalf("pgcluster: unknown subcommand %q", args[0])
	}
}
