package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	tests := []struct {
		name string
		src  string
		cap  error
		line int
	}{
		{"object", `{"a": [1, 2, {"b": "c"}]}`, nil, 0},
		{"brackets in strings", `{"a": "[[[[[[[[[[", "b": "\"[[[[[[[[[\\"}`, nil, 0},
		{"escaped quote", `["\"", "[[[[[[[[[[[[\\", 1]`, nil, 0},
		{"deep", "{\n\"a\": [[[[[1]]]]]}", ErrTooDeep, 2},
		{"deep after a string", `["]]]]]]", [[[[1]]]]]`, ErrTooDeep, 1},
		{"many values", "[" + strings.Repeat("1,", 400) + "1]", ErrTooManyNodes, 1},
		{"large", `"` + strings.Repeat("x", 2000) + `"`, ErrTooLarge, 1},
	}
	k := Kind{Noun: "a test file", Fix: "fix it", MaxBytes: 1000, MaxDepth: 4, MaxNodes: 100}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckJSON([]byte(tt.src), "f.json", k)
			if tt.cap == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *Error
			if !errors.Is(err, tt.cap) || !errors.As(err, &le) || le.Line != tt.line {
				t.Fatalf("got %v, want %v at line %d", err, tt.cap, tt.line)
			}
		})
	}
}

func TestCheckJSONAllocatesNothing(t *testing.T) {
	src := []byte(strings.Repeat(`{"name": "x", "tags": ["a", "b\"[["], "n": 1},`+"\n", 50_000))
	k := Index
	k.MaxNodes, k.MaxBytes = 1<<30, 1<<30
	if allocs := testing.AllocsPerRun(5, func() {
		if err := CheckJSON(src, "index.json", k); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("CheckJSON allocated %v times per run, want 0", allocs)
	}
}

func TestCheckLines(t *testing.T) {
	k := Kind{Noun: "a .env file", Fix: "fix it", MaxBytes: 100, MaxNodes: 3}
	if err := CheckLines([]byte("A=1\nB=2\n"), ".env", k); err != nil {
		t.Fatal(err)
	}
	var le *Error
	if err := CheckLines([]byte("A=1\nB=2\nC=3\nD=4\n"), ".env", k); !errors.Is(err, ErrTooManyNodes) || !errors.As(err, &le) || le.Line != 4 {
		t.Fatalf("got %v, want too many lines at line 4", err)
	}
	if err := CheckLines([]byte(strings.Repeat("A=1\n", 50)), ".env", k); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want too large", err)
	}
}

func TestCheckValue(t *testing.T) {
	deep := any(1)
	for range 100 {
		deep = []any{deep}
	}
	wide := make([]any, 200_000)
	tests := []struct {
		name string
		v    any
		cap  error
	}{
		{"scalar", "x", nil},
		{"nested", map[string]any{"a": []any{1, map[string]any{"b": nil}}}, nil},
		{"deep", deep, ErrTooDeep},
		{"deep in a map", map[string]any{"a": deep}, ErrTooDeep},
		{"wide", wide, ErrTooManyNodes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckValue(tt.v, `the value of ctx.set_config("k")`, PluginValue)
			if !errors.Is(err, tt.cap) || (tt.cap == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.cap)
			}
		})
	}
	err := CheckValue(deep, `the value of ctx.set_config("k")`, PluginValue)
	want := `the value of ctx.set_config("k") nests deeper than 64 levels; a stored plugin value needs a few; store large or deep data in a file under the plugin's data directory`
	if err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// Every real file hermes ships or is tested with passes its caps.
func TestRealFilesPass(t *testing.T) {
	root := filepath.Join("..", "..")
	var n int
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.Contains(path, "limits") {
			return nil
		}
		var check func([]byte, string, Kind) error
		var k Kind
		switch base := d.Name(); {
		case base == "plugin.yaml" || base == "plugin.yml":
			check, k = CheckYAML, Manifest
		case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
			check, k = CheckYAML, Config
		case strings.HasSuffix(base, ".json"):
			check, k = CheckJSON, Index
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if err := check(b, path, k); err != nil {
			t.Errorf("a real file is refused: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	shared, _ := filepath.Glob("/work/shared/data/plugin-index/*.json")
	for _, p := range shared {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, k := range []Kind{Index, Catalog} {
			if err := CheckJSON(b, p, k); err != nil {
				t.Errorf("a real index is refused: %v", err)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d real files found; the walk is broken", n)
	}
	t.Logf("%d real files pass", n)
}
