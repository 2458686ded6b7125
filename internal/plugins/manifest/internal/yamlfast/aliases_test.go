package yamlfast

import (
	"testing"

	"github.com/goccy/go-yaml/parser"

	"github.com/hermes-go/hermes/internal/testutil/yamlbomb"
)

func TestExpandedValues(t *testing.T) {
	tests := []struct {
		name string
		src  string
		ok   bool
	}{
		{"plain", "name: x\ntags: [a, b]\n", true},
		{"a few aliases", "base: &b {url: u, key: k}\nprod:\n  <<: *b\n  key: k2\nother: *b\n", true},
		{"alias bomb", yamlbomb.Source(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parser.ParseBytes([]byte(tt.src), 0)
			if err != nil {
				t.Fatal(err)
			}
			n, ok := ExpandedValues(f.Docs[0], MaxExpandedValues)
			if ok != tt.ok {
				t.Fatalf("ExpandedValues = %d, %v; want ok %v", n, ok, tt.ok)
			}
		})
	}
}
