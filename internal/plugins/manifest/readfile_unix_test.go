//go:build unix

package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/home"
)

// TestLoadDirRefusesSpecialFiles: a named pipe or directory in place of the
// manifest or __init__.py is refused at once, naming the file; a named pipe
// would otherwise block the open until a writer appears.
func TestLoadDirRefusesSpecialFiles(t *testing.T) {
	tests := []struct {
		name    string
		special string // file made a named pipe ("dir:" prefix: a directory)
		want    string
	}{
		{"manifest named pipe", "plugin.yaml", "plugin.yaml is a named pipe, not a file"},
		{"init named pipe", "__init__.py", "__init__.py is a named pipe, not a file"},
		{"manifest directory", "dir:plugin.yaml", "plugin.yaml is a directory, not a file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			special, isDir := strings.CutPrefix(tc.special, "dir:")
			if special != "plugin.yaml" {
				if err := os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte("name: p\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, special)
			var err error
			if isDir {
				err = os.Mkdir(path, 0o755)
			} else {
				err = unix.Mkfifo(path, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, _, err := LoadDir(dir); done <- err }()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("LoadDir blocked on the special file")
			}
			var nr *home.NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadDir error = %v, want a *home.NotRegularError saying %q", err, tc.want)
			}
		})
	}
}
