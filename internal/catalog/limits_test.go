package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/limits"
)

func TestParseRefusesHostileDocuments(t *testing.T) {
	deep := []byte(`{"plugins": ` + strings.Repeat("[", 1_000_000) + "}")
	if _, _, err := ParseIndex(deep); !errors.Is(err, limits.ErrTooDeep) {
		t.Fatalf("ParseIndex: %v, want a depth refusal", err)
	}
	if _, _, _, err := ParseCatalog(deep); !errors.Is(err, limits.ErrTooDeep) {
		t.Fatalf("ParseCatalog: %v, want a depth refusal", err)
	}
	wide := []byte(`{"entries": [` + strings.Repeat("1,", 600_000) + "1]}")
	if _, _, _, err := ParseCatalog(wide); !errors.Is(err, limits.ErrTooManyNodes) {
		t.Fatalf("ParseCatalog: %v, want a value-count refusal", err)
	}
}
