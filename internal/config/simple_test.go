package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// simpleSeeds are configs at the edges of what the fast reader accepts.
var simpleSeeds = []string{
	"plugins:\n  enabled: [a, b]\n  disabled: [c]\n_config_version: 21\n",
	"# bench fixture\nplugins:\n  enabled: [docker-tools-010, search-tools-020]\n  disabled: [notes-tools-001]\n_config_version: 21\n",
	"a: 1\nb: -2\nc: 2.5\nd: true\ne: null\nf: ~\ng: 'q'\nh: \"dq\"\n",
	"a: 1\na: 2\n",
	"plugins:\n  enabled:\n  - a\n  - b\n",
	"plugins:\n    enabled:\n        - a # c\n",
	"top:\n  mid:\n    leaf: [1, 2.5, true, null]\n",
	"k: 0x1F\nl: 1e3\nm: .5\nn: 0o17\no: +1\n",
	"k: yes\nl: no\nm: on\nn: off\n",
	"k: 123456789012345678901234567890\n",
	"k: -9223372036854775809\n",
	"k: 18446744073709551615\n",
	"k: '2024-01-01'\nl: 2024-01-01\n",
	"k: a: b\n",
	"k: [a, [b]]\n",
	"k:\n",
	"k:\n  - \n",
	"a: 1\r\nb: 2\r\n",
	"\ufeffa: 1\n",
	"# only a comment\n",
	"\n\n",
	" A:\n#\n",
	"a:\n  b: 1\n #\n  c: 2\n",
	"a:\n  b: 1\n#\n  c: 2\n",
	"a:\n  - x\n#\n  - y\n",
	"a: [x, y] #c\nb: 'x' # c\n",
}

// The fast reader's contract: whatever it accepts, the full parse accepts too,
// with the same values (and the same line ending, which edits keep).
func checkSimpleAgrees(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := parseSimple(data, "c.yaml")
	if !ok {
		return
	}
	full, err := parseFull(data, "c.yaml")
	if err != nil {
		t.Fatalf("fast reader accepted what the full parse rejects\ninput: %q\nfast: %#v\nfull error: %v", data, fast.tree, err)
	}
	if !equalValues(fast.tree, full.tree) || !reflect.DeepEqual(fast.tree, full.tree) {
		t.Fatalf("readers disagree\ninput: %q\nfast: %#v\nfull: %#v", data, fast.tree, full.tree)
	}
	if fast.nl != full.nl {
		t.Fatalf("line endings disagree for %q: %q vs %q", data, fast.nl, full.nl)
	}
}

func simpleCorpus(t testing.TB) [][]byte {
	var out [][]byte
	for _, s := range append(append([]string{}, simpleSeeds...), editSeeds...) {
		out = append(out, []byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.yaml"))
	files = append(files, filepath.Join("testdata", "realistic.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestParseSimpleAgrees(t *testing.T) {
	for _, data := range simpleCorpus(t) {
		checkSimpleAgrees(t, data)
	}
}

func FuzzParseSimpleAgrees(f *testing.F) {
	for _, data := range simpleCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			t.Skip()
		}
		checkSimpleAgrees(t, data)
	})
}

// skipWithoutFastDecoder skips a test of the fast path in a build with the
// hermes_yamlgeneral tag, which turns the fast decoder off to measure it.
func skipWithoutFastDecoder(t *testing.T) {
	t.Helper()
	if _, ok := parseSimple([]byte("a: 1\n"), "c.yaml"); !ok {
		t.Skip("the fast decoder is off (-tags hermes_yamlgeneral)")
	}
}

// The configs hermes writes and people keep take the fast path; otherwise its
// speed is lost silently.
func TestParseSimpleCoversEverydayConfigs(t *testing.T) {
	skipWithoutFastDecoder(t)
	for _, s := range simpleSeeds[:2] {
		if _, ok := parseSimple([]byte(s), "c.yaml"); !ok {
			t.Errorf("fast reader declined an everyday config:\n%s", s)
		}
	}
	d := NewDoc()
	for _, kv := range [][2]string{{"plugins.enabled", "[a, b]"}, {"plugins.hook_callback_timeout", "30"}, {"_config_version", "21"}} {
		if err := d.Set(kv[0], ParseValue(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := parseSimple(d.Bytes(), "c.yaml"); !ok {
		t.Errorf("fast reader declined a config hermes wrote:\n%s", d.Bytes())
	}
}

// Editing a Doc the fast reader produced gives the same bytes as editing one the
// full parse produced: the first edit builds what the fast reader skipped.
func TestEditAfterSimpleParse(t *testing.T) {
	skipWithoutFastDecoder(t)
	src := []byte("# keep me\nplugins:\n  enabled: [a, b]   # list\n  disabled: [c]\n_config_version: 21\n")
	fast, err := Parse(src, "c.yaml")
	if err != nil || !fast.simple {
		t.Fatalf("want the fast path: simple=%v err=%v", fast != nil && fast.simple, err)
	}
	full, err := parseFull(src, "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Doc{fast, full} {
		if _, err := d.ListAppend("plugins.enabled", "z"); err != nil {
			t.Fatal(err)
		}
		if err := d.Set("plugins.tool_call_timeout", 60); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ListRemove("plugins.disabled", "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Delete("_config_version"); err != nil {
			t.Fatal(err)
		}
	}
	if string(fast.Bytes()) != string(full.Bytes()) {
		t.Fatalf("edits differ\nfast-read: %s\nfull-read: %s", fast.Bytes(), full.Bytes())
	}
}
