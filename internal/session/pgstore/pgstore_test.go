package pgstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session/pgstore"
)

// TestConcurrentMigrate: processes starting at once against an empty
// database (each its own pool, so its own server sessions) all open it, and
// each migration runs once: without the advisory lock two would both create
// the schema and one would fail on the duplicate.
func TestConcurrentMigrate(t *testing.T) {
	ctx := context.Background()
	u := db(t)
	const procs = 6
	var wg sync.WaitGroup
	stores := make([]*pgstore.Store, procs)
	errs := make([]error, procs)
	start := make(chan struct{})
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			stores[i], errs[i] = pgstore.Open(ctx, u, pgstore.Options{MaxConns: 2})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		t.FailNow()
	}
	rows, err := stores[0].Pool().Query(ctx, `SELECT version FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != pgstore.SchemaVersion || got[0] != 1 || got[len(got)-1] != pgstore.SchemaVersion {
		t.Fatalf("schema_version rows %v, want 1..%d once each", got, pgstore.SchemaVersion)
	}
	if v, err := stores[1].Migrate(ctx); err != nil || v != pgstore.SchemaVersion {
		t.Fatalf("Migrate again = %d, %v", v, err)
	}
}

// TestNewerSchema: a database migrated by a newer hermes is refused, naming
// the versions and what to do.
func TestNewerSchema(t *testing.T) {
	ctx := context.Background()
	u := db(t)
	s := openURL(t, u)
	if _, err := s.Pool().Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, pgstore.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Open(ctx, u, pgstore.Options{})
	if err == nil {
		t.Fatal("opened a newer schema")
	}
	for _, want := range []string{"newer than this hermes knows", "upgrade hermes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		name, url string
		want      []string
		notWant   string
	}{
		{"not a URL", "postgres://hermes:s3cret@db:notaport/hermes", []string{"is not a PostgreSQL URL", "postgres://user@host:5432/dbname"}, "s3cret"},
		{"unreachable", "postgres://hermes:s3cret@/hermes?host=" + dir + "&connect_timeout=2", []string{"cannot reach the session store", "socket " + dir, "check that the server is running"}, "s3cret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pgstore.Open(ctx, tc.url, pgstore.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
	// A database that does not exist says so.
	u := db(t)
	q := strings.Index(u, "?")
	i := strings.LastIndex(u[:q], "/")
	missing := u[:i+1] + "no_such_db" + u[q:]
	if _, err := pgstore.Open(ctx, missing, pgstore.Options{}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing database: %v", err)
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://hermes@db/hermes": true, "postgresql://x/y": true, " POSTGRES://a/b": true,
		"state.db": false, "": false, "/var/lib/hermes/state.db": false, "mysql://a/b": false,
	} {
		if got := pgstore.IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v", in, got)
		}
	}
}

// TestPassword: a server that asks for a password gets Options.Password
// when the URL has none (the URL's own wins); a wrong one is refused with
// what to check.
func TestPassword(t *testing.T) {
	ctx := context.Background()
	u := db(t)
	admin := openURL(t, u)
	if _, err := admin.Pool().Exec(ctx, `CREATE ROLE hermes_pw LOGIN SUPERUSER PASSWORD 'right-one'`); err != nil {
		t.Fatal(err)
	}
	// This role must log in with a password (the cluster trusts everyone else).
	hba := filepath.Join(cluster.Dir, "data", "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(hba, old, 0o600)
		_, _ = admin.Pool().Exec(context.Background(), `SELECT pg_reload_conf()`)
	})
	if err := os.WriteFile(hba, append([]byte("local all hermes_pw scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Pool().Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	asUser := strings.Replace(u, "user=postgres", "user=hermes_pw", 1)
	withURLPassword := strings.Replace(u, "user=postgres", "user=hermes_pw&password=right-one", 1)
	cases := []struct {
		name, url, password string
		wantErr             string
	}{
		{"from the options", asUser, "right-one", ""},
		{"the URL's own wins", withURLPassword, "wrong", ""},
		{"wrong", asUser, "wrong", "refused the login"},
		{"none", asUser, "", "refused the login"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pgstore.Open(ctx, tc.url, pgstore.Options{Password: tc.password})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "HERMES_PG_PASSWORD") {
				t.Errorf("error %q lacks %q and the variable to check", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "right-one") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// TestMigrateFromVersion2: a database written before messages had a
// source_id (schema version 2) is migrated on open, keeps its messages
// (with no source) and takes new ones with one.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	u := db(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`},
		pgstore.Migrations[0], pgstore.Migrations[1],
		`INSERT INTO schema_version (version) VALUES (1), (2)`,
		`INSERT INTO sessions (id, created_at, updated_at, last_seq) VALUES ('old', 1, 1, 1)`,
		`INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('old', 1, 'user', 'hello', 1)`) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	_ = conn.Close(ctx)

	s := openURL(t, u)
	if v, err := s.Version(ctx); err != nil || v != pgstore.SchemaVersion || v < 3 {
		t.Fatalf("Version = %d, %v; want %d", v, err, pgstore.SchemaVersion)
	}
	if _, err := s.AppendFrom(ctx, "old", llm.Message{Role: "user", Content: "again"}, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, "old")
	if err != nil || len(hist) != 2 {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	if hist[0].Content != "hello" || hist[0].SourceID != "" || hist[1].SourceID != "telegram:7" || hist[1].Seq != 2 {
		t.Errorf("after the migration: %+v", hist)
	}
}
