package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// editSeeds are YAML shapes the editor must cope with; they seed FuzzEdit.
var editSeeds = []string{
	"",
	"# only a comment\n",
	"~\n",
	"a: 1",
	"a: 1\r\nb:\r\n  - x\r\n",
	"{a: 1, b: [x, y]}\n",
	"plugins:\n  enabled: [a, b]  # c\n",
	"plugins:\n  enabled:\n  - a\n  - b\n",
	"plugins:\n",
	"plugins: ~\n",
	"a: |\n  text\n\n  more\nb: >-\n  folded\n",
	"a: &anc\n  x: 1\nb: *anc\nc:\n  <<: *anc\n  y: 2\n",
	"---\nk: v\n...\n",
	"k: 'it''s'   # q\n\"quoted key\": \"v\"\n? complex\n: value\n",
	"top:\n    four: 1\n    deeper:\n        x: [1, 2.5, true, null]\n",
	"a: plain\n  continued line\nb: 2\n",
	"a: 1 # c\n# trailing\n\n",
	"x: !!str 123\ny: !custom {a: 1}\n",
	"  indented: 1\n  second: 2\n",
}

func FuzzEdit(f *testing.F) {
	for _, s := range editSeeds {
		f.Add([]byte(s), "value")
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "realistic.yaml")); err == nil {
		f.Add(b, "[a, b]")
		f.Add(b, "{k: v}")
	}
	f.Add([]byte("a: 1\n"), "")
	f.Add([]byte("a: 1\n"), "yes")
	f.Add([]byte("a: 1\n"), `"x\ny"`)
	f.Fuzz(func(t *testing.T, data []byte, raw string) {
		d, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		before := d.Map()
		key := "hermes_fuzz_fresh"
		for {
			if _, taken := before[key]; !taken {
				break
			}
			key += "_"
		}
		// Set refuses invalid UTF-8 by design (YAML cannot hold it); that is tested elsewhere.
		v := ParseValue(strings.ToValidUTF8(raw, "?"))
		for _, path := range []string{key, key + ".nested.leaf"} {
			d, err := Parse(data, "fuzz.yaml")
			if err != nil {
				t.Fatalf("second parse failed: %v", err)
			}
			if err := d.Set(path, v); err != nil {
				t.Fatalf("Set(%q, %#v) on %q: %v", path, v, data, err)
			}
			d2, err := Parse(d.Bytes(), "fuzz.yaml")
			if err != nil {
				t.Fatalf("re-parse after Set(%q) failed: %v\n%s", path, err, d.Bytes())
			}
			got, ok := d2.Get(path)
			if !ok || !equalValues(got, v) {
				t.Fatalf("Get(%q) = %#v, %v; want %#v\n%s", path, got, ok, v, d.Bytes())
			}
			after := d2.Map()
			for k, old := range before {
				if nv, ok := after[k]; !ok || !equalValues(old, nv) {
					t.Fatalf("top-level key %q changed or vanished after Set(%q)\n%s", k, path, d.Bytes())
				}
			}
		}
	})
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"", " ", "true", "False", "null", "~", "42", "-7", "0x1F", "0o17", "017",
		"1.5", "1e3", ".inf", "-.Inf", ".nan", "[a, b]", "{k: v}", "[1, {a: [x]}]", `"quoted # x"`,
		"'single'", "a: b", "x # y", "[unclosed", "18446744073709551615", "99999999999999999999", "yes", "héllo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := ParseValue(s)
		if _, err := normalize(v, false); err != nil {
			t.Fatalf("ParseValue(%q) = %#v: not a canonical value: %v", s, v, err)
		}
		// Whatever ParseValue returns must survive a write and a read unchanged.
		d := NewDoc()
		if err := d.Set("k", v); err != nil {
			if str, ok := v.(string); ok && !utf8.ValidString(str) {
				return
			}
			t.Fatalf("Set(k, ParseValue(%q) = %#v): %v", s, v, err)
		}
		d2, err := Parse(d.Bytes(), "v.yaml")
		if err != nil {
			t.Fatalf("written value does not parse: %v\n%s", err, d.Bytes())
		}
		if got, _ := d2.Get("k"); !equalValues(got, v) {
			t.Fatalf("ParseValue(%q) = %#v, read back as %#v\n%s", s, v, got, d.Bytes())
		}
	})
}
