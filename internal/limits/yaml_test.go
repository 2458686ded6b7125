package limits

import (
	"errors"
	"strings"
	"testing"
)

var small = Kind{Noun: "a test file", Fix: "fix it", MaxBytes: 1 << 20, MaxDepth: 4, MaxNodes: 1000}

func TestCheckYAML(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int // 0: accepted; else the line of the refusal
	}{
		{"empty", "", 0},
		{"flat mapping", "a: 1\nb: two\nc: [1, 2, 3]\n", 0},
		{"brackets in a plain scalar", "description: use [brackets] and {braces} [[[[[[ freely\n", 0},
		{"brackets in a plain scalar continued", "a: x [[[[[[\n  more [[[[[[\n", 0},
		{"brackets after a key inside a scalar", "a: b:[[[[[[[\n", 0},
		{"brackets glued to a key", "a:[[[[[[[\n", 0},
		{"single-quoted", "a: '[[[[[[[ it''s [[[[['\n", 0},
		{"double-quoted with escapes", `a: "[[[[[[ \" [[[[[[ \\"` + "\n", 0},
		{"quoted across lines", "a: \"[[[[[[\n  [[[[[[[\"\nb: 1\n", 0},
		{"apostrophe in a plain scalar", "a: it's [[[[[[[\nb: '[[[[[['\n", 0},
		{"comment", "a: 1 # [[[[[[[[[[\n# {{{{{{{{{{{\n", 0},
		{"hash inside a scalar is no comment", "a: [x#y, [[1]]]\n", 0},
		{"literal block scalar", "a: |\n  [[[[[[[[\n  {{{{{{{{{\n\n  '''''\nb: [1]\n", 0},
		{"folded block scalar in a list", "- >-\n  [[[[[[[[[[\n- b\n", 0},
		{"block scalar under a list key", "- key: |\n    [[[[[[[[\n  other: 1\n", 0},
		{"quote inside a flow list", "a: [x, '[[[[[[', \"{{{{{{\"]\n", 0},
		{"json style", `{"a": "[[[[[[[", "b": ["{{{{{{{"]}` + "\n", 0},
		{"anchors and tags", "a: &x [1]\nb: !!seq [2]\nc: *x\n", 0},
		{"documents", "---\na: 1\n...\n--- [1]\n", 0},
		{"four levels", "a:\n  b:\n    c: [1]\n", 0},
		{"CRLF", "a:\r\n  b: [1]\r\n", 0},

		{"five block levels", "a:\n b:\n  c:\n   d:\n    e: 1\n", 5},
		{"flow nesting", "a: [[[[1]]]]\n", 1},
		{"flow over lines", "a: [\n [\n  [\n   [\n", 4},
		{"flow after a block scalar ends", "a: |\n  x\nb: [[[[1]]]]\n", 3},
		{"flow after a property", "a: &x [[[[1]]]]\n", 1},
		{"flow after a tag", "a: !!seq [[[[1]]]]\n", 1},
		{"flow after a glued property", "a: &x[[[[1]]]]\n", 1},
		{"flow after a quoted key", `"a":[[[[1]]]]` + "\n", 1},
		{"dashes on one line", "- - - - - x\n", 1},
		{"compact lists under keys", "a:\n- b:\n  - c:\n    - 1\n", 3},
		{"lists of mappings", "- a:\n  - b:\n    - c: 1\n", 3},
		{"block scalar less indented than its key", "- key: |\n  [[[[[1]]]]]\n", 2},
		{"unterminated quote hides nothing before it", "a: [[[[[ '\n", 1},
		{"a quote glued to a plain scalar is no quote", "a: x'\nb: [[[[1]]]]\n", 2},
		{"tab separator", "a:\t[[[[1]]]]\n", 1},
		{"after a document marker", "--- [[[[[1]]]]]\n", 1},
		{"JSON-style quote after a colon", "{a:'x', b: [[[[1]]]]}\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckYAML([]byte(tt.src), "f.yaml", small)
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *Error
			if !errors.As(err, &le) || !errors.Is(err, ErrTooDeep) {
				t.Fatalf("got %v, want a depth refusal at line %d", err, tt.line)
			}
			if le.Line != tt.line {
				t.Errorf("refused at line %d, want %d: %v", le.Line, tt.line, err)
			}
		})
	}
}

func TestCheckYAMLCaps(t *testing.T) {
	k := Kind{Noun: "a manifest", Fix: "fix or remove the file", MaxBytes: 100, MaxDepth: 64, MaxNodes: 5}
	tests := []struct {
		name, src string
		cap       error
		want      string
	}{
		{"size", strings.Repeat("a: 1\n", 30), ErrTooLarge, "plugin.yaml is larger than 100 bytes; a manifest is a few KiB (the cap falls at line 21); fix or remove the file"},
		{"nodes", "a: 1\nb: 2\nc: 3\nd: [1,2,3]\n", ErrTooManyNodes, "plugin.yaml at line 3 holds more than 5 values; a manifest holds a few hundred; fix or remove the file"},
		{"depth", "a: 1\n" + strings.Repeat("[", 80) + "\n", ErrTooDeep, "plugin.yaml at line 2 nests deeper than 64 levels; a manifest needs a few; fix or remove the file"},
	}
	k.MaxBytes = 100
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kk := k
			if tt.cap != ErrTooManyNodes {
				kk.MaxNodes = 1000
			}
			err := CheckYAML([]byte(tt.src), "plugin.yaml", kk)
			if !errors.Is(err, tt.cap) || err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

// The hostile inputs are refused at their first lines, whatever their size.
func TestCheckYAMLHostile(t *testing.T) {
	tests := []struct {
		name string
		src  string
		k    Kind
		cap  error
		line int
	}{
		{"50,000 [", strings.Repeat("[", 50_000), Manifest, ErrTooDeep, 1},
		{"nested [ in a manifest", "name: x\nversion: 1\ntags: " + strings.Repeat("[", 200_000), Manifest, ErrTooDeep, 3},
		{"deep block mapping", deepBlock(200), Config, ErrTooDeep, 129},
		{"30 MB config", strings.Repeat("key: "+strings.Repeat("v", 300)+"\n", 100_000), Config, ErrTooLarge, 4<<20/306 + 1},
		{"many values", strings.Repeat("[1,1,1,1,1,1,1,1,1,1]\n", 30_000), Config, ErrTooManyNodes, 18_182},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckYAML([]byte(tt.src), "config.yaml", tt.k)
			var le *Error
			if !errors.Is(err, tt.cap) || !errors.As(err, &le) || le.Line != tt.line {
				t.Fatalf("got %v, want %v at line %d", err, tt.cap, tt.line)
			}
		})
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("k:\n")
	}
	return b.String()
}

// Memory stays bounded: the pass allocates nothing on an accepted input.
func TestCheckYAMLAllocatesNothing(t *testing.T) {
	src := []byte(strings.Repeat("key: [a, 'b', \"c\", {d: e}] # note\nlist:\n  - x: |\n      text\n", 20_000))
	k := Config
	k.MaxNodes = 1 << 30
	allocs := testing.AllocsPerRun(5, func() {
		if err := CheckYAML(src, "config.yaml", k); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("CheckYAML allocated %v times per run, want 0", allocs)
	}
}
