package session_test

import (
	"os"
	"path/filepath"
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
