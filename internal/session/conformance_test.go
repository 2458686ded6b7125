package session_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/storetest"
)

// TestConformance runs the engines' shared suite on state.db (pgstore runs
// it on PostgreSQL).
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) session.Backend { return newStore(t) },
		Reopen: func(t *testing.T, s session.Backend) session.Backend {
			return open(t, s.(*session.Store).Path())
		},
	})
}

// The file is private: created 0600 before SQLite opens it.
func TestFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), session.FileName)
	open(t, path)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state.db mode %v, %v", st.Mode(), err)
	}
}

// Several processes opening a new state.db at once: one creates the schema,
// the others wait for it (the busy first open is retried).
func TestConcurrentFirstOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), session.FileName)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := session.Open(context.Background(), path)
			if err == nil {
				_, err = s.NewSession(context.Background(), session.Session{})
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	if list, err := open(t, path).List(context.Background(), 0); err != nil || len(list) != n {
		t.Fatalf("List = %d sessions, %v; want %d", len(list), err, n)
	}
}
