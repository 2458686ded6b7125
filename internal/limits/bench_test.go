package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// go test -run '^$' -bench . -benchmem ./internal/limits
func BenchmarkCheck(b *testing.B) {
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Skip(err)
		}
		return data
	}
	manifests, _ := filepath.Glob("../../examples/plugins/*/plugin.yaml")
	var realManifests []byte
	for _, m := range manifests {
		realManifests = append(realManifests, read(m)...) // many small ones, measured as one run
	}
	cases := []struct {
		name  string
		data  []byte
		yaml  bool
		k     Kind
		valid bool
	}{
		{"real/example-manifests", realManifests, true, Manifest, true},
		{"real/config-testdata", read("../config/testdata/realistic.yaml"), true, Config, true},
		{"real/community-index.json", read("/work/shared/data/plugin-index/community-index.json"), false, Index, true},
		{"hostile/manifest-50k-[", []byte(strings.Repeat("[", 50_000)), true, Manifest, false},
		{"at-cap/config-4MiB-91k-lines", []byte(strings.Repeat("key: "+strings.Repeat("v", 40)+"\n", 4<<20/46)), true, Config, true},
		{"hostile/config-30MB", []byte(strings.Repeat("key: "+strings.Repeat("v", 40)+"\n", 30<<20/46)), true, Config, false},
		{"hostile/index-5MiB-[", []byte(strings.Repeat("[", 5<<20)), false, Index, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				var err error
				if c.yaml {
					err = CheckYAML(c.data, "f", c.k)
				} else {
					err = CheckJSON(c.data, "f", c.k)
				}
				if (err == nil) != c.valid {
					b.Fatalf("valid=%v but err=%v", c.valid, err)
				}
			}
		})
	}
}
