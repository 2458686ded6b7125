package redact

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// benchPatterns are 50 plugin patterns, each with its own literal prefix.
func benchPatterns() []string {
	out := make([]string, 50)
	for i := range out {
		out[i] = fmt.Sprintf("pl%02dx_[A-Za-z0-9]{16,}", i)
	}
	return out
}

// benchText is ~1 MB of tool output: log lines, JSON, a few secrets of each
// kind and some plugin-shaped ones, as `terminal` output of a build could be.
func benchText() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		switch {
		case i%997 == 0:
			fmt.Fprintf(&b, "export API_TOKEN=%s\n", fake("", 24))
		case i%1499 == 0:
			fmt.Fprintf(&b, "using key %s for the request\n", fake("sk"+"-", 40))
		case i%1201 == 0:
			fmt.Fprintf(&b, "plugin said %s\n", fake(fmt.Sprintf("pl%02dx_", i%50), 20))
		case i%3 == 0:
			fmt.Fprintf(&b, `{"level":"info","ts":%d,"msg":"compiled package","pkg":"github.com/acme/pkg%d","ms":%d}`+"\n", 1700000000+i, i, i%97)
		default:
			fmt.Fprintf(&b, "2026-12-02T20:%02d:%02dZ INFO worker %d processed item %d in %dms (queue depth %d)\n", i%60, i%60, i%8, i, i%250, i%13)
		}
	}
	return b.String()
}

// BenchmarkRedact1MB50Plugins is what hermes does to 1 MB of tool output with
// 50 plugin patterns registered.
func BenchmarkRedact1MB50Plugins(b *testing.B) {
	text := benchText()
	r := New(benchPatterns())
	r.String("warm") // compile outside the timing
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		_ = r.String(text)
	}
}

// BenchmarkCombinedRegexOnePass is the floor the redactor is held to: one pass
// of a single regexp joining the same rules over the same text, finding every
// match (no replacing).
func BenchmarkCombinedRegexOnePass(b *testing.B) {
	text := benchText()
	r := New(benchPatterns())
	parts := make([]string, len(r.rules))
	for i, ru := range r.rules {
		parts[i] = "(?:" + ru.expr + ")"
	}
	re := regexp.MustCompile(strings.Join(parts, "|"))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		_ = re.FindAllStringIndex(text, -1)
	}
}

// TestBenchTextIsRedacted keeps the benchmark honest: its text holds secrets of
// each kind (built-in and plugin), and the redactor finds them all.
func TestBenchTextIsRedacted(t *testing.T) {
	text := benchText()
	got := New(benchPatterns()).String(text)
	for _, secret := range []string{fake("", 24), fake("sk"+"-", 40), fake("pl01x_", 20)} {
		if !strings.Contains(text, secret) {
			t.Fatalf("bench text lacks %q", secret)
		}
		if strings.Contains(got, secret) {
			t.Fatalf("%q survived redaction", secret)
		}
	}
}
