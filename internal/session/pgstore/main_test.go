package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/pgstore"
	"github.com/hermes-go/hermes/internal/session/storetest"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// One throwaway cluster for the package; every test takes a database of
// its own in it.
var (
	cluster    *pgtest.Cluster
	clusterErr error
)

func TestMain(m *testing.M) {
	cluster, clusterErr = pgtest.New()
	if clusterErr == nil {
		if clusterErr = cluster.Start(); clusterErr != nil {
			cluster.Remove()
			cluster = nil
		}
	}
	code := m.Run()
	if cluster != nil {
		cluster.Remove()
	}
	os.Exit(code)
}

// db is a fresh database's URL; without PostgreSQL the test is skipped,
// except under CI=true, where it fails (pgtest's rule).
func db(t testing.TB) string {
	t.Helper()
	if cluster == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v", clusterErr)
		}
		t.Skipf("pgtest: %v", clusterErr)
	}
	return cluster.DB(t)
}

func openURL(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// urls remembers each store's database, for Reopen.
var urls = map[session.Backend]string{}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) session.Backend {
			u := db(t)
			s := openURL(t, u)
			urls[s] = u
			return s
		},
		Reopen: func(t *testing.T, s session.Backend) session.Backend {
			u, ok := urls[s]
			if !ok {
				t.Fatalf("no URL for %v", s.Where())
			}
			return openURL(t, u)
		},
	})
}

func TestDocsConformance(t *testing.T) {
	storetest.RunDocs(t, storetest.DocHarness{
		New: func(t *testing.T) session.DocStore {
			u := db(t)
			s := openURL(t, u)
			urls[s] = u
			return s
		},
		Reopen: func(t *testing.T, d session.DocStore) session.DocStore {
			return openURL(t, urls[d.(session.Backend)])
		},
	})
}
