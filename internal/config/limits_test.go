package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/limits"
)

func TestParseRefusesHostileFiles(t *testing.T) {
	tests := []struct {
		name string
		src  string
		cap  error
		line int
	}{
		{"nested flow", "a: 1\nb: " + strings.Repeat("[", 50_000) + "\n", limits.ErrTooDeep, 2},
		{"deep block", func() string {
			var b strings.Builder
			for i := range 300 {
				b.WriteString(strings.Repeat(" ", i) + "k:\n")
			}
			return b.String()
		}(), limits.ErrTooDeep, 129},
		{"30 MB", strings.Repeat("key_"+strings.Repeat("v", 290)+": 1\n", 100_000), limits.ErrTooLarge, 4<<20/298 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "config.yaml")
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.cap) || pe.Line != tt.line {
				t.Fatalf("got %v, want a %v ParseError at line %d", err, tt.cap, tt.line)
			}
		})
	}
}

func TestStoreRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("k: v\n", 2_000_000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Store{Path: path}).Load(); !errors.Is(err, limits.ErrTooManyNodes) && !errors.Is(err, limits.ErrTooLarge) {
		t.Fatalf("Load: %v, want a cap error", err)
	}
	// An edit that would make the file unreadable is refused and nothing is written.
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := any(1)
	for range 200 {
		deep = []any{deep}
	}
	err := (Store{Path: path}).Update(context.Background(), func(d *Doc) error { return d.SetPath([]string{"b"}, deep) })
	if err == nil || !strings.Contains(err.Error(), "nests deeper than 128 levels") {
		t.Fatalf("Update: %v, want a depth refusal", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a: 1\n" {
		t.Fatalf("the file changed: %q", b)
	}
}

func TestDotenvRefusesHugeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte(strings.Repeat("A=1\n", 400_000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDotenv(path); !errors.Is(err, limits.ErrTooLarge) {
		t.Fatalf("ReadDotenv: %v, want too large", err)
	}
	if err := SetDotenv(context.Background(), path, "B", "2"); !errors.Is(err, limits.ErrTooLarge) {
		t.Fatalf("SetDotenv: %v, want too large", err)
	}
}
