//go:build unix

package config

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipeIsRefused: a named pipe at config.yaml or .env must not block the
// read until some writer appears; every reader refuses it, naming the file.
func TestNamedPipeIsRefused(t *testing.T) {
	ops := []struct {
		name string
		run  func(path string) error
	}{
		{"Load", func(p string) error { _, err := Store{Path: p}.Load(); return err }},
		{"Update", func(p string) error {
			return Store{Path: p}.Update(context.Background(), func(*Doc) error { return nil })
		}},
		{"ReadDotenv", func(p string) error { _, err := ReadDotenv(p); return err }},
		{"SetDotenv", func(p string) error { return SetDotenv(context.Background(), p, "K", "v") }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- op.run(path) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), path+" is a named pipe, not a file") {
					t.Fatalf("error = %v, want one saying %s is a named pipe", err, path)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("blocked reading the named pipe")
			}
		})
	}
}
