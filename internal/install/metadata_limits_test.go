package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/limits"
)

func TestReadMetadataRefusesHostileFiles(t *testing.T) {
	tests := []struct {
		name, src string
		cap       error
	}{
		{"deep", `{"a": ` + strings.Repeat("[", 100_000) + "}", limits.ErrTooDeep},
		{"large", `{"a": {"repo": "` + strings.Repeat("x", 2<<20) + `"}}`, limits.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), MetadataFile)
			if err := os.WriteFile(path, []byte(tt.src), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMetadata(path)
			var ce *CorruptMetadataError
			if !errors.As(err, &ce) || !errors.Is(err, tt.cap) || !strings.Contains(err.Error(), "line 1") {
				t.Fatalf("got %v, want a corrupt-metadata error for %v at line 1", err, tt.cap)
			}
		})
	}
}
