package toolview

import (
	"strings"
	"testing"
	"time"
)

// Diff runs on the chat's update loop when a call starts: a one-line patch of
// a 5 000-line file.
func BenchmarkDiffPatchLargeFile(b *testing.B) {
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString("func f")
		sb.WriteString(strings.Repeat("x", i%40))
		sb.WriteString("() {}\n")
	}
	file := []byte(sb.String() + "the unique line\n" + sb.String())
	args := `{"path":"big.go","old_string":"the unique line","new_string":"the changed line"}`
	read := func(string) ([]byte, error) { return file, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Diff("patch", args, read, 100, true); !ok {
			b.Fatal("no diff")
		}
	}
}

// Header is redrawn on every spinner frame for each running call.
func BenchmarkHeader(b *testing.B) {
	c := Call{Name: "terminal", Args: `{"command":"go test ./internal/... -run TestSomething -count=1","timeout":300}`, Duration: 3 * time.Second}
	b.ReportAllocs()
	for b.Loop() {
		_ = Header(c, 80, "⠋", true)
	}
}
