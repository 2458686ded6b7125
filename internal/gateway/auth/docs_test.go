package auth

import (
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/storetest"
)

// The pairing files are a session.DocStore like pgstore's table: the same
// cases run on both.
func TestFilesDocsConformance(t *testing.T) {
	storetest.RunDocs(t, storetest.DocHarness{
		New: func(t *testing.T) session.DocStore {
			return storeDir{dir: filepath.Join(t.TempDir(), "platforms", "pairing")}
		},
		Reopen: func(t *testing.T, d session.DocStore) session.DocStore { return d.(storeDir) },
	})
}
