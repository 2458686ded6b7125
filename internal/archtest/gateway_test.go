package archtest

import (
	"slices"
	"testing"
)

// platformAdapters are the built-in platform adapters: each is driven by
// the runner through internal/gateway/platform alone and knows nothing else
// of hermes, so the runner, plugins and config never leak into one.
var platformAdapters = []string{"internal/gateway/discord"}

// What an adapter may import of hermes: the seam and leaves.
var adapterImports = []string{"internal/gateway/platform", "internal/termsafe", "internal/clock", "internal/jsonx", "internal/lazyre", "internal/limits"}

func TestAdaptersImportOnlyTheSeam(t *testing.T) {
	found := 0
	for _, p := range list(t) {
		if !slices.Contains(platformAdapters, p.ImportPath) {
			continue
		}
		found++
		for _, imp := range own(p.Imports) {
			if !slices.Contains(adapterImports, imp) {
				t.Errorf("%s imports %s: a platform adapter uses internal/gateway/platform and leaves (%v) only", p.ImportPath, imp, adapterImports)
			}
		}
	}
	if found != len(platformAdapters) {
		t.Errorf("found %d of the adapters %v: a package moved?", found, platformAdapters)
	}
}
