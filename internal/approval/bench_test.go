package approval

import "testing"

// BenchmarkCheck: the guard's cost per terminal call, for a typical compound command.
func BenchmarkCheck(b *testing.B) {
	g := &Guard{Deny: []string{"git push*"}, Allow: []string{KeyRecursiveDelete}}
	cmd := `cd /work/repo && git status --short | grep -v '^??' && rm -rf ./build && bash -c "make -j2 test" > out.log 2>&1`
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Check(cmd)
	}
}
