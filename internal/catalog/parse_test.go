package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sharedIndexDir is the real index files of ../shared/data/plugin-index (never
// copied into the repo). HERMES_SHARED_DATA overrides the location.
func sharedIndexDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("HERMES_SHARED_DATA")
	if base == "" {
		base = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(base, "plugin-index")
	if _, err := os.Stat(filepath.Join(dir, "community-index.json")); err != nil {
		t.Skipf("real index files not found at %s (set HERMES_SHARED_DATA to the shared/data folder): %v", dir, err)
	}
	return dir
}

func TestParseRealIndexes(t *testing.T) {
	dir := sharedIndexDir(t)
	for _, tc := range []struct {
		file string
		want int
	}{
		{"seed-plugin_index.json", 6}, // schema_version + generated_at + plugins
		{"community-index.json", 19},  // no schema_version, odd indentation
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			entries, warns, err := ParseIndex(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != tc.want || len(warns) != 0 {
				t.Fatalf("got %d entries, warnings %q; want %d and none", len(entries), warns, tc.want)
			}
			for _, e := range entries {
				if e.Origin != OriginIndex || !isSHA(e.Ref) || !ghRepoRE.MatchString(e.Repo) {
					t.Errorf("entry %+v not normalised", e)
				}
			}
		})
	}
	// A subdir entry of the real index resolves to owner/repo/subdir.
	b, _ := os.ReadFile(filepath.Join(dir, "community-index.json"))
	entries, _, _ := ParseIndex(b)
	c := NewCatalog(entries, nil)
	e, err := c.Lookup("revell-context")
	if err != nil {
		t.Fatal(err)
	}
	if e.Identifier() != "Revell-ai/revell-onyx/dove" || e.GitURL() != "https://github.com/Revell-ai/revell-onyx.git" {
		t.Fatalf("identifier %q url %q", e.Identifier(), e.GitURL())
	}
}

const sha1 = "0123456789abcdef0123456789abcdef01234567"

func TestParseIndexSkipsInvalidEntries(t *testing.T) {
	doc := `{"schema_version": 1, "plugins": [
	  {"name": "good", "repo": "acme/good", "ref": "` + strings.ToUpper(sha1) + `", "tags": ["x"], "subdir": "/plugins/good/"},
	  {"name": "short", "repo": "acme/short", "ref": "0123456"},
	  {"name": "tagref", "repo": "acme/tagref", "ref": "v1.2.0"},
	  {"name": "insecure", "repo": "http://example.com/acme/x", "ref": "` + sha1 + `"},
	  {"repo": "acme/noname", "ref": "` + sha1 + `"},
	  {"name": "slashy/name", "repo": "acme/x", "ref": "` + sha1 + `"},
	  {"name": "escape", "repo": "acme/x", "ref": "` + sha1 + `", "subdir": "../../etc"},
	  {"name": "badtags", "repo": "acme/x", "ref": "` + sha1 + `", "tags": "oops"},
	  {"name": "url", "repo": "https://github.com/acme/url.git", "ref": "` + sha1 + `"},
	  42
	]}`
	entries, warns, err := ParseIndex([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name != "good" || entries[1].Repo != "acme/url" {
		t.Fatalf("entries: %+v", entries)
	}
	if entries[0].Ref != sha1 || entries[0].Subdir != "plugins/good" {
		t.Fatalf("not normalised: %+v", entries[0])
	}
	want := []string{"'short' (#2)", "short SHA", "'tagref' (#3)", "tags and branches can move", "'insecure' (#4)", "plain http://",
		"#5 skipped: no name", "'slashy/name' (#6)", "'escape' (#7)", "leaves the repository", "'badtags' (#8)", "#10 skipped: malformed"}
	all := strings.Join(warns, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	if len(warns) != 8 {
		t.Errorf("%d warnings, want 8:\n%s", len(warns), all)
	}
	// A bare list is accepted too.
	if e, _, err := ParseIndex([]byte(`[{"name":"a","repo":"o/r","ref":"` + sha1 + `"}]`)); err != nil || len(e) != 1 {
		t.Fatalf("bare list: %v %v", e, err)
	}
}

func TestParseDocumentErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"html", "\n<!DOCTYPE html><html><body>Sign in</body></html>", "HTML page"},
		{"empty", "  ", "empty document"},
		{"truncated", `{"plugins": [{"name": "a"`, "not valid JSON"},
		{"text", "Service Unavailable", "not JSON"},
		{"no plugins", `{"entries": []}`, `no "plugins" list`},
		{"plugins not list", `{"plugins": {}}`, `"plugins" is not a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseIndex([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, _, _, err := ParseCatalog([]byte("<html>")); !errors.Is(err, ErrHTML) {
		t.Fatalf("catalog html: %v", err)
	}
	if _, _, _, err := ParseCatalog([]byte(`[]`)); err == nil {
		t.Fatal("a list is not a catalog")
	}
}

func TestParseCatalog(t *testing.T) {
	doc := `{"entries": [
	  {"name": "relay", "repo": "https://example.com/acme/relay.git", "sha": "` + sha1 + `", "tier": "Official",
	   "maintainer": "Acme", "subdir": "plugins/relay", "capabilities": {"provides_tools": ["relay_send"], "requires_env": ["RELAY_TOKEN"]}},
	  {"name": "plain", "repo": "https://example.com/p", "sha": "` + sha1 + `"},
	  {"name": "Upper", "repo": "https://example.com/u", "sha": "` + sha1 + `"},
	  {"name": "insecure", "repo": "http://example.com/i", "sha": "` + sha1 + `"},
	  {"name": "short", "repo": "https://example.com/s", "sha": "abc1234"},
	  {"name": "nosha", "repo": "https://example.com/n"},
	  {"name": "tiered", "repo": "https://example.com/t", "sha": "` + sha1 + `", "tier": "gold"},
	  {"name": "shorthand", "repo": "acme/x", "sha": "` + sha1 + `"}
	], "removed": [{"name": "evil", "reason": "exfiltrates keys", "date": "2026-09-01"}, {"repo": "https://github.com/bad/actor.git"}, {}]}`
	entries, removed, warns, err := ParseCatalog([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Tier != "official" || entries[1].Tier != "community" {
		t.Fatalf("entries %+v", entries)
	}
	if got := entries[0].Capabilities(); strings.Join(got, ",") != "tools,env" {
		t.Fatalf("capabilities %v", got)
	}
	if entries[0].Identifier() != "https://example.com/acme/relay.git#plugins/relay" || entries[0].Provenance() != "catalog:official" {
		t.Fatalf("identifier %q", entries[0].Identifier())
	}
	if len(removed) != 2 || len(warns) != 7 {
		t.Fatalf("removed %v warnings %q", removed, warns)
	}
	c := &Catalog{Removed: removed}
	if k, ok := c.RemovedFor("EVIL", ""); !ok || k.Reason != "exfiltrates keys" {
		t.Fatal("kill list by name")
	}
	if _, ok := c.RemovedFor("other", "bad/actor"); !ok {
		t.Fatal("kill list by normalised repo")
	}
	if _, ok := c.RemovedFor("other", "https://github.com/good/actor"); ok {
		t.Fatal("false kill-list match")
	}
}

func TestSeedIsValid(t *testing.T) {
	e, _ := Seed()
	if len(e) < 3 {
		t.Fatalf("seed has %d entries", len(e))
	}
	for _, x := range e {
		if x.Tier != "official" || x.Subdir == "" {
			t.Errorf("seed entry %+v", x)
		}
	}
}

func TestLookup(t *testing.T) {
	c := NewCatalog([]Entry{
		{Name: "relay", Repo: "https://github.com/acme/relay", Ref: sha1, Origin: OriginCatalog, Tier: "official"},
		{Name: "relay", Repo: "acme/relay", Ref: sha1, Origin: OriginIndex},
		{Name: "twin", Repo: "a/twin", Ref: sha1, Origin: OriginIndex},
		{Name: "twin", Repo: "b/twin", Ref: sha1, Origin: OriginIndex},
		{Name: "telegram-bridge", Repo: "a/tb", Ref: sha1, Origin: OriginIndex},
	}, nil)
	// The same plugin in both sources is one match; the curated entry wins.
	e, err := c.Lookup("Relay")
	if err != nil || e.Origin != OriginCatalog {
		t.Fatalf("relay: %v %v", e, err)
	}
	_, err = c.Lookup("twin")
	var le *LookupError
	if !errors.As(err, &le) || !le.Ambiguous || len(le.Candidates) != 2 || !strings.Contains(err.Error(), "a/twin") {
		t.Fatalf("twin: %v", err)
	}
	// A unique substring is suggested, never installed.
	_, err = c.Lookup("telegram")
	if !errors.As(err, &le) || le.Ambiguous || !strings.Contains(err.Error(), "Did you mean:\n  telegram-bridge") {
		t.Fatalf("telegram: %v", err)
	}
	for id, want := range map[string]bool{"relay": true, "a_b.c-1": true, "owner/repo": false, "https://x/y": false, "git@h:x": false, "..": false, "": false, "a\\b": false} {
		if IsBareName(id) != want {
			t.Errorf("IsBareName(%q) != %v", id, want)
		}
	}
}

// The hand-written shape checks accept exactly what upstream's patterns accept.
func TestShapeChecksMatchUpstreamPatterns(t *testing.T) {
	bare := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	curated := regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	sha := regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	short := regexp.MustCompile(`^[0-9a-fA-F]{4,39}$`)
	inputs := []string{"", "a", "hello-world", "Hello_World.v2", "a/b", "a b", "é", strings.Repeat("x", 64),
		strings.Repeat("x", 65), "ABC", "abc", "0123456789abcdef0123456789abcdef01234567",
		"0123456789ABCDEF0123456789abcdef01234567", "0123456789abcdef0123456789abcdef0123456", "abc1", "abcg"}
	for _, s := range inputs {
		if got, want := allIn(s, 1, 64, isBareNameChar), bare.MatchString(s); got != want {
			t.Errorf("bare name %q: %v, pattern says %v", s, got, want)
		}
		if got, want := allIn(s, 1, 64, isCatalogNameChar), curated.MatchString(s); got != want {
			t.Errorf("catalog name %q: %v, pattern says %v", s, got, want)
		}
		if got, want := isSHA(s), sha.MatchString(s); got != want {
			t.Errorf("sha %q: %v, pattern says %v", s, got, want)
		}
		if got, want := allIn(s, 4, 39, isHex), short.MatchString(s); got != want {
			t.Errorf("short sha %q: %v, pattern says %v", s, got, want)
		}
	}
}
