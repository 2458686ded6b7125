package manifest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/manifest/internal/yamlfast"
)

// fastCorpus is YAML the fast decoder must either decline or decode exactly
// as the general decoder does. It mixes everyday manifests with the corners
// of the subset's edges.
var fastCorpus = []string{
	"",
	"# only a comment\n",
	"name: hello-world\nversion: \"1.0\"\ndescription: A minimal example plugin\n",
	"name: disk-cleanup\nversion: 2.2.0\ndescription: \"Clean owned cache/cron files.\"\nauthor: \"@LVT382009 (original), NousResearch (plugin port)\"\nhooks:\n  - pre_tool_call\n  - post_tool_call\n",
	"name: github\nkind: backend\nprovides_tools:\n  - github_identity\n  - github_create_issue\n",
	"version: 1.10\n",
	"version: 1.0\n",
	"version: 1\n",
	"version: 007\n",
	"version: 08\n",
	"version: 0x1F\n",
	"version: 0o17\n",
	"version: 0b101\n",
	"version: 1_000\n",
	"version: +12\n",
	"version: 1e3\n",
	"version: 1.5e3\n",
	"version: .5\n",
	"version: 5.\n",
	"version: 99999999999999999999999\n",
	"version: 1.2.3-rc1\n",
	"version: v1.2\n",
	"flag: true\nother: False\nnone: null\ntilde: ~\nyes: yes\nno: no\non: on\n",
	"date: 2024-01-02\nts: 2001-12-14t21:59:43.10-05:00\ntime: 12:30\n",
	"homepage: https://example.com/x#readme\n",
	"description: C# and F# plugins\n",
	"description: a #comment here\n",
	"description: He said \"hi\" to 'them'\n",
	"description: use [x] and {y}, then z\n",
	"description: ratio 1:2 and url:x\n",
	"description: path C:\\temp\\x\n",
	"description: trailing spaces   \n",
	"description: ends with colon:\n",
	"description: 'single ''quoted'' text'\n",
	"description: 'unterminated\n",
	"description: \"double # not a comment\"  # a comment\n",
	"description: \"tab\\tescape\"\n",
	"description: \"x\"y\n",
	"description: 'x'y\n",
	"description: Tool — with unicode ✓\n",
	"tags: [demo, 2024, true, null, \"quoted, comma\", 'single']\n",
	"tags: []\n",
	"tags: [ ]\n",
	"tags: [a, ]\n",
	"tags: [a,b,c]\n",
	"tags: [a b, c]\n",
	"tags: [1.5, 0x10, ~]\n",
	"tags: [a, [b]]\n",
	"tags: [a, {b: c}]\n",
	"tags: [a]  # comment\n",
	"tags: [a]x\n",
	"tags: [-a, .b]\n",
	"config: {}\n",
	"config: { }\n",
	"config: {a: b}\n",
	"provides_tools:\n- a\n- b\nname: x\n",
	"provides_tools:\n  - a\n  - b\nname: x\n",
	"provides_tools:\n    - a\n    - b\n",
	"requires_env:\n  - FOO\n  - name: BAR\n    description: \"bar key\"\n    url: https://x\n    secret: true\n  - name: BAZ\n",
	"requires_env:\n- name: BAR\n  secret: true\n- BAZ\n",
	"requires_env:\n  -   name: BAR\n      secret: true\n",
	"author:\n  name: Jo\n  email: jo@example.com\n",
	"config_schema:\n  api_key:\n    type: str\n    required: true\n  retries:\n    type: int\n    default: 3\n",
	"a:\n  b:\n    c:\n      - x\n      - y: 1\n        z: 2\n",
	"name: x\nname: y\n",
	"name: x\nversion: 1.5\nversion: \"2\"\n",
	"name: x\n  continued\n",
	"description: first\n  second line\n",
	"- a\n- b\n",
	"just a scalar\n",
	"name: x\n- a\n",
	"name: x\n\tversion: 1\n",
	"name: x\r\nversion: 1\r\n",
	"---\nname: x\n",
	"name: x\n---\nname: y\n",
	"%YAML 1.2\n---\nname: x\n",
	"name: &a x\nother: *a\n",
	"name: !!str 1\n",
	"description: |\n  block\n  text\n",
	"description: >\n  folded\n",
	"key:\n",
	"key:\nother: 1\n",
	"key: # comment only\n",
	"key:   value   # c\n",
	"key:value\n",
	"1: one\n",
	"true: yes\n",
	"null: x\n",
	"a.b: 1\nc-d: 2\n_e: 3\n",
	"\"quoted key\": 1\n",
	"? complex\n: value\n",
	"key: -1\n",
	"key: - item\n",
	"key: .inf\n",
	"key: -.inf\n",
	"key: .nan\n",
	"  indented: 1\n  map: 2\n",
	"  indented: 1\nnot: 2\n",
	"list:\n  - a\n   - b\n",
	"list:\n  - a\n  -\n",
	"list:\n  - - a\n",
	"list:\n  - a: 1\n    - b\n",
	"list:\n  - a: 1\n     b: 2\n",
	"map:\n  a: 1\n   b: 2\n",
	"name: x # trailing\nversion: 1 # trailing\n",
	"name: x\n\n\n# c\n\nversion: 2\n",
	"name: @x\n",
	"name: `x`\n",
	"name: %x\n",
	"name: x: y\n",
	"emoji: 🎉\n",
	"k: \"\"\n",
	"k: ''\n",
	"k: '''\n",
	"k: \"a\" # c\n",
	"k: \"a\"# c\n",
	"k: 'a'#c\n",
	"k: [a]#c\n",
	"k: {}#c\n",
	"k: a#b\n",
	"k: a #b #c\n",
	"k: 0\n",
	"k: -0\n",
	"k: 00\n",
	"k: 0.\n",
	"k: 1.2.3\n",
	"k: 1,000\n",
	"k: 1 000\n",
	"k: _1\n",
	"k: 1_\n",
	"k: 0x\n",
	"k: 0xZZ\n",
	"k: 18446744073709551615\n",
	"k: 18446744073709551616\n",
	"k: 9223372036854775807\n",
	"k: y\nn: n\n",
	"k: NULL\nj: Null\n",
	"k: [NULL, True, FALSE]\n",
	"k: [\"a\\\"b\"]\n",
	"k: ['a''b']\n",
	"k: [a:b]\n",
	"k: [a#b]\n",
	"k: [\"x\" , 'y' ]\n",
	"k: [\"x\"y]\n",
}

func sameDecoded(t *testing.T, src string) {
	t.Helper()
	fast, ok := yamlfast.Decode(src)
	if !ok {
		return
	}
	slow, err := slowDecode([]byte(src), "plugin.yaml")
	if err != nil {
		t.Fatalf("fast decoder accepted what the general decoder rejects\ninput: %q\nfast: %#v\nslow error: %v", src, fast.Doc, err)
	}
	if !reflect.DeepEqual(fast.Doc, slow.Doc) {
		t.Fatalf("decoders disagree\ninput: %q\nfast: %#v\nslow: %#v", src, fast.Doc, slow.Doc)
	}
	if !sameLit(fast.Lit, slow.Lit) {
		t.Fatalf("literal texts disagree\ninput: %q\nfast: %#v\nslow: %#v", src, fast.Lit, slow.Lit)
	}
	if fmt.Sprint(fast.Dups) != fmt.Sprint(slow.Dups) {
		t.Fatalf("duplicate keys disagree\ninput: %q\nfast: %v\nslow: %v", src, fast.Dups, slow.Dups)
	}
}

func sameLit(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestFastDecodeAgreesWithGeneralDecoder(t *testing.T) {
	for _, src := range fastCorpus {
		t.Run(fmt.Sprintf("%.40q", src), func(t *testing.T) { sameDecoded(t, src) })
	}
}

// skipWithoutFastDecoder skips a test of the fast path in a build with the
// hermes_yamlgeneral tag, which turns the fast decoder off to measure it.
func skipWithoutFastDecoder(t *testing.T) {
	t.Helper()
	if !yamlfast.Enabled {
		t.Skip("the fast decoder is off (-tags hermes_yamlgeneral)")
	}
}

// TestFastDecodeCoversEverydayManifests pins that the fast path really is
// taken for the manifests people write; otherwise the speed is lost silently.
func TestFastDecodeCoversEverydayManifests(t *testing.T) {
	skipWithoutFastDecoder(t)
	everyday := []string{
		fastCorpus[2], fastCorpus[3], fastCorpus[4],
		benchManifest,
		"name: x\nrequires_env:\n  - name: BAR\n    description: \"bar key\"\n    secret: true\ntags: [a, b]\nauthor:\n  name: Jo\n",
	}
	for _, src := range everyday {
		if _, ok := yamlfast.Decode(src); !ok {
			t.Errorf("fast decoder declined an everyday manifest:\n%s", src)
		}
	}
}

// TestFastDecodeDeclines pins inputs the fast decoder must hand over, because
// only the general decoder can report them properly.
func TestFastDecodeDeclines(t *testing.T) {
	for _, src := range []string{
		"name: [a\nb: c\n",
		"a: b\n  c: d\n",
		"- x\n",
		"name: &a x\n",
		"k: \"esc\\n\"\n",
		"description: |\n  x\n",
		"---\nname: x\n",
		"\tname: x\n",
	} {
		if d, ok := yamlfast.Decode(src); ok {
			t.Errorf("fast decoder accepted %q as %#v; it should decline", src, d.Doc)
		}
	}
}

// FuzzFastDecodeAgrees checks the fast decoder's contract on arbitrary input:
// decline, or agree with the general decoder.
func FuzzFastDecodeAgrees(f *testing.F) {
	for _, s := range fastCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Count(src, "\n") > 200 {
			t.Skip()
		}
		sameDecoded(t, src)
	})
}

// TestFastDecodeRandomDocuments composes documents from fragments near the
// subset's edges (fixed seed, so failures reproduce) and checks the contract
// on each; byte-level fuzzing rarely builds such structure by itself.
func TestFastDecodeRandomDocuments(t *testing.T) {
	skipWithoutFastDecoder(t)
	keys := []string{"name", "version", "tags", "a", "b.c", "d-e", "_f", "name", "k"}
	oddKeys := []string{"1", "x y", "true", "\"q\"", "a:b"}
	scalars := []string{
		"x", "hello world", "1", "1.0", "1.10", "0x10", "007", "1e3", "true", "False", "null", "~",
		"yes", "2024-01-02", "12:30", "a#b", "a #b", "C:\\x", "[]", "[a, b]", "[a, 1, null]", "'q'",
		"'a''b'", "\"d\"", "\"a#b\"", "é", "x  ", "{}", "use [x] now", "He said \"hi\"",
	}
	oddScalars := []string{
		"-1", "+1", ".5", "a: b", "a:", "[x", "\"e\\n\"", "&a x", "*a", "!!str 1", "|", ">", "@x",
		"`x`", "[a,]", "{a: b}", "\"x\"y", "'x", "- x", "?", "-", ".inf", "[a, [b]]",
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(good, odd []string) string {
		if r.IntN(8) == 0 {
			return odd[r.IntN(len(odd))]
		}
		return good[r.IntN(len(good))]
	}
	indent := func(cur int) int {
		switch r.IntN(10) {
		case 0:
			return cur + 1 + r.IntN(3)
		case 1:
			if cur > 0 {
				return cur - 1
			}
		}
		return cur
	}
	const total = 40000
	accepted := 0
	for n := 0; n < total; n++ {
		var b strings.Builder
		cur := 0
		for lines := 1 + r.IntN(10); lines > 0; lines-- {
			pad := strings.Repeat(" ", cur)
			switch r.IntN(7) {
			case 0, 1, 2:
				fmt.Fprintf(&b, "%s%s: %s\n", pad, pick(keys, oddKeys), pick(scalars, oddScalars))
			case 3:
				fmt.Fprintf(&b, "%s%s:\n", pad, pick(keys, oddKeys))
				cur += []int{0, 2, 4}[r.IntN(3)]
				continue
			case 4:
				fmt.Fprintf(&b, "%s- %s\n", pad, pick(scalars, oddScalars))
			case 5:
				fmt.Fprintf(&b, "%s- %s: %s\n", pad, pick(keys, oddKeys), pick(scalars, oddScalars))
			case 6:
				cur = 0
				fmt.Fprintf(&b, "%s: %s\n", pick(keys, oddKeys), pick(scalars, oddScalars))
			}
			cur = indent(cur)
			if r.IntN(10) == 0 {
				b.WriteString("# comment\n")
			}
		}
		if _, ok := yamlfast.Decode(b.String()); ok {
			accepted++
		}
		sameDecoded(t, b.String())
	}
	// The check means little if nearly everything is declined.
	if accepted < total/20 {
		t.Fatalf("fast decoder accepted only %d of %d generated documents; the generator no longer reaches the subset", accepted, total)
	}
	t.Logf("fast decoder accepted %d of %d generated documents", accepted, total)
}
