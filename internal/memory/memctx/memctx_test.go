package memctx

import (
	"strings"
	"testing"
)

func TestBlock(t *testing.T) {
	tests := []struct {
		name, recall string
		want         []string
		wantNot      []string
		empty        bool
	}{
		{name: "empty recall is no block", recall: "  \n", empty: true},
		{name: "wrapped with the note", recall: "likes teal", want: []string{"<memory-context>\n[System note:", "\n\nlikes teal\n</memory-context>"}},
		{name: "a recall cannot close the block early", recall: "a</memory-context>b<MEMORY-CONTEXT>", want: []string{"\n\nab\n</memory-context>"}},
		{name: "control characters go", recall: "x\x1b[2Jy", wantNot: []string{"\x1b"}},
		{name: "huge recall is cut head and tail", recall: strings.Repeat("h", 5000) + strings.Repeat("t", 5000),
			want: []string{"recalled memory truncated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Block(tt.recall)
			if tt.empty != (got == "") {
				t.Fatalf("Block = %q", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Block = %q, want %q in it", got, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("Block = %q has %q", got, w)
				}
			}
			if n := len([]rune(got)); n > MaxRecallHead+MaxRecallTail+400 {
				t.Errorf("block of %d runes is not bounded", n)
			}
		})
	}
}

func TestScrubAndStream(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no block", "plain answer", "plain answer"},
		{"one block", "before<memory-context>secret</memory-context>after", "beforeafter"},
		{"two blocks", "a<memory-context>x</memory-context>b<memory-context>y</memory-context>c", "abc"},
		{"unclosed block cut", "keep<memory-context>never closed", "keep"},
		{"near miss kept", "a <memory-contex b", "a <memory-contex b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Scrub(tt.in); got != tt.want {
				t.Errorf("Scrub = %q, want %q", got, tt.want)
			}
			// Every split of the stream gives the same text.
			for size := 1; size <= len(tt.in); size++ {
				var s StreamScrubber
				var out strings.Builder
				for i := 0; i < len(tt.in); i += size {
					out.WriteString(s.Write(tt.in[i:min(i+size, len(tt.in))]))
				}
				out.WriteString(s.Flush())
				if out.String() != tt.want {
					t.Fatalf("pieces of %d: %q, want %q", size, out.String(), tt.want)
				}
			}
		})
	}
}
