package telegram

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestSplit(t *testing.T) {
	long := strings.Repeat("word ", 2000) // 10 000 units
	emoji := strings.Repeat("😀", 3000)    // 2 units each: 6000 units
	lines := strings.Repeat("a line of text\n", 400)
	tests := []struct {
		name   string
		text   string
		limit  int
		pieces int
	}{
		{"short", "hello", 4096, 1},
		{"empty", "", 4096, 1},
		{"exactly the limit", strings.Repeat("x", 4096), 4096, 1},
		{"one over", strings.Repeat("x", 4097), 4096, 2},
		{"words", long, 4096, 3},
		{"surrogate pairs counted as two", emoji, 4096, 2},
		{"lines", lines, 4096, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text, tc.limit)
			if len(got) != tc.pieces {
				t.Fatalf("%d pieces, want %d", len(got), tc.pieces)
			}
			if strings.Join(got, "") != tc.text {
				t.Fatal("the pieces do not add up to the text")
			}
			for i, p := range got {
				if n := len(utf16.Encode([]rune(p))); n > tc.limit {
					t.Fatalf("piece %d is %d units", i, n)
				}
				if !strings.HasPrefix(tc.text, strings.Join(got[:i+1], "")) || strings.ContainsRune(p, '\uFFFD') {
					t.Fatalf("piece %d cut a rune", i)
				}
			}
			if tc.name == "lines" && !strings.HasSuffix(got[0], "\n") {
				t.Fatalf("did not cut at a line break: %q", got[0][len(got[0])-20:])
			}
		})
	}
}

func TestMarkdownV2(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hi! I am Hermes.", `Hi\! I am Hermes\.`},
		{"**bold** text", `*bold* text`},
		{"use `go test ./...` now", "use `go test ./...` now"},
		{"```go\nfmt.Println(\"a`b\")\n```", "```go\nfmt.Println(\"a\\`b\")\n```"},
		{"a_b*c [x](y)", `a\_b\*c \[x\]\(y\)`},
		{"unclosed `code", "unclosed \\`code"},
		{"**not bold", `\*\*not bold`},
		{`back\slash`, `back\\slash`},
	}
	for _, tc := range tests {
		if got := MarkdownV2(tc.in); got != tc.want {
			t.Errorf("MarkdownV2(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
