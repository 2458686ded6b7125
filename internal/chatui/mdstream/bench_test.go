package mdstream

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// answer is a ~20 KB markdown answer of the kind a coding model streams:
// prose, lists, a table and several code blocks, one of them long.
func answer() string {
	var b strings.Builder
	prose := "The function reads the file, splits it into **records** and checks each one against the `schema`; " +
		"a record that fails is reported with its line number, so the caller can [fix it](https://example.com/docs) and run again. "
	for sec := 0; b.Len() < 20_000; sec++ {
		fmt.Fprintf(&b, "## Step %d\n\n%s%s\n\n", sec+1, prose, prose)
		b.WriteString("Things to check:\n\n")
		for i := range 5 {
			fmt.Fprintf(&b, "%d. item %d: *look* at `field_%d` and compare it with the previous run\n", i+1, i, i)
		}
		b.WriteString("\n```go\n")
		n := 12
		if sec == 2 {
			n = 120 // one long fence, so its lines must be final as they come
		}
		for i := range n {
			fmt.Fprintf(&b, "\tif err := check(rec[%d]); err != nil { // record %d\n\t\treturn fmt.Errorf(\"record %d: %%w\", err)\n\t}\n", i, i, i)
		}
		b.WriteString("```\n\n")
		if sec%2 == 1 {
			b.WriteString("| field | type | required |\n|---|---|---|\n| id | int | yes |\n| name | string | no |\n\n")
			b.WriteString("```python\ndef load(path):\n    with open(path) as f:\n        return [parse(l) for l in f]\n```\n\n")
		}
	}
	return b.String()
}

// deltas cuts s into n pieces of about equal size (a piece may end inside
// a UTF-8 sequence, as a network read can).
func deltas(s string, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, s[i*len(s)/n:(i+1)*len(s)/n])
	}
	return out
}

// streamOnce streams the pieces and returns how long each Write+Tail took.
func streamOnce(pieces []string, o Options, into []time.Duration) []time.Duration {
	s := New(o)
	for _, p := range pieces {
		t0 := time.Now()
		_ = s.Write(p)
		_ = s.Tail()
		into = append(into, time.Since(t0))
	}
	_ = s.Close()
	return into
}

func pct(d []time.Duration, p float64) float64 {
	i := min(len(d)-1, int(float64(len(d))*p))
	return float64(d[i].Nanoseconds()) / 1e3
}

// transcript renders n earlier messages and keeps them, as the chat does.
func transcript(n int, o Options) []string {
	md := answer()
	out := make([]string, 0, n)
	for i := range n {
		// vary them so nothing is cached across messages
		out = append(out, Render(fmt.Sprintf("Message %d.\n\n", i)+md[:2000+i%7*1000], o))
	}
	return out
}

// BenchmarkStreamDelta streams a ~20 KB answer in 2,000 deltas and reports
// the render work (Write + Tail) per delta at p50/p90/p99, with an empty
// transcript and after 500 earlier messages were rendered.
func BenchmarkStreamDelta(b *testing.B) {
	o := Options{Width: 100, Color: true}
	md := answer()
	pieces := deltas(md, 2000)
	for _, n := range []int{0, 500} {
		b.Run(fmt.Sprintf("transcript=%d", n), func(b *testing.B) {
			kept := transcript(n, o)
			streamOnce(pieces, o, nil) // warm: lexers compiled, renderer built
			var all []time.Duration
			b.ResetTimer()
			for b.Loop() {
				all = streamOnce(pieces, o, all)
			}
			b.StopTimer()
			slices.Sort(all)
			b.ReportMetric(pct(all, 0.50), "p50-µs/delta")
			b.ReportMetric(pct(all, 0.90), "p90-µs/delta")
			b.ReportMetric(pct(all, 0.99), "p99-µs/delta")
			b.ReportMetric(float64(len(md)), "answer-bytes")
			b.ReportMetric(float64(len(pieces)), "deltas")
			runtime.KeepAlive(kept)
		})
	}
}

// BenchmarkStreamDeltaRatio interleaves streams with an empty transcript and
// with 500 rendered messages and reports p90(500)/p90(0): a Stream does not
// know the transcript, so the ratio stays near 1.
func BenchmarkStreamDeltaRatio(b *testing.B) {
	o := Options{Width: 100, Color: true}
	pieces := deltas(answer(), 2000)
	streamOnce(pieces, o, nil)
	var empty, full []time.Duration
	b.ResetTimer()
	for b.Loop() {
		empty = streamOnce(pieces, o, empty)
		b.StopTimer()
		kept := transcript(500, o)
		b.StartTimer()
		full = streamOnce(pieces, o, full)
		runtime.KeepAlive(kept)
	}
	b.StopTimer()
	slices.Sort(empty)
	slices.Sort(full)
	b.ReportMetric(pct(empty, 0.90), "p90-empty-µs")
	b.ReportMetric(pct(full, 0.90), "p90-500msgs-µs")
	b.ReportMetric(pct(full, 0.90)/pct(empty, 0.90), "p90-ratio")
}

// BenchmarkLongFence streams a 400-line code block and reports the work per
// delta over its first and its last 50 lines: they are the same, since the
// lines of an open fence are final as they complete.
func BenchmarkLongFence(b *testing.B) {
	o := Options{Width: 100, Color: true}
	var md strings.Builder
	md.WriteString("```go\n")
	for i := range 400 {
		fmt.Fprintf(&md, "\tsum += values[%d] * weight(%d) // term %d\n", i, i, i)
	}
	md.WriteString("```\n")
	pieces := deltas(md.String(), 4000)
	streamOnce(pieces, o, nil)
	var first, last []time.Duration
	b.ResetTimer()
	for b.Loop() {
		d := streamOnce(pieces, o, nil)
		first = append(first, d[:len(d)/8]...)
		last = append(last, d[len(d)-len(d)/8:]...)
	}
	b.StopTimer()
	slices.Sort(first)
	slices.Sort(last)
	b.ReportMetric(pct(first, 0.90), "p90-first50-µs")
	b.ReportMetric(pct(last, 0.90), "p90-last50-µs")
}
