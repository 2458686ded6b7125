package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-go/hermes/internal/testutil/benchhome"
	"github.com/hermes-go/hermes/internal/testutil/coldrun"
)

// coldFuncs are what the cold benchmarks run once in a fresh test process
// (see TestMain and internal/testutil/coldrun).
var coldFuncs = map[string]coldrun.Func{
	"load": func(path string) error {
		_, err := Store{Path: path}.Load()
		return err
	},
}

// BenchmarkLoad reads config.yaml as every hermes command does, warm (the
// loop) and cold (once per fresh process, as a command meets it): the config of
// bench/plugins-list.sh and the hand-edited testdata/realistic.yaml. Build
// with -tags hermes_yamlgeneral to measure it without the fast YAML decoder.
func BenchmarkLoad(b *testing.B) {
	fixture := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(fixture, []byte(benchhome.Config(200)), 0o644); err != nil {
		b.Fatal(err)
	}
	realistic, err := filepath.Abs(filepath.Join("testdata", "realistic.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{{"bench-fixture", fixture}, {"realistic", realistic}} {
		b.Run(c.name+"/warm", func(b *testing.B) {
			for b.Loop() {
				if _, err := (Store{Path: c.path}).Load(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/cold", func(b *testing.B) { coldrun.Bench(b, "load", c.path) })
	}
}
