package hostapi

import (
	"regexp"
	"strings"
	"testing"
)

// validPromptSectionID must accept exactly upstream's id pattern.
func TestValidPromptSectionID(t *testing.T) {
	upstream := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`)
	for _, id := range []string{"", "a", "house-style", "fac.rules", "0_x", "-a", ".a", "A", "a b", "a/b",
		strings.Repeat("a", 128), strings.Repeat("a", 129), "é", "a\n", "a.B"} {
		if got, want := validPromptSectionID(id), upstream.MatchString(id); got != want {
			t.Errorf("validPromptSectionID(%q) = %v, upstream pattern says %v", id, got, want)
		}
	}
}
