package urlscheme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		raw    string
		slug   string
		kind   string
		scheme string
		enable *bool
		force  bool
	}{
		{"hermes://plugin/install?repo=owner/repo", "owner/repo", "plugin", "hermes", nil, false},
		{"hermes://plugin/install?repo=owner/repo&enable=1", "owner/repo", "plugin", "hermes", &yes, false},
		{"hermes://plugin/install?repo=owner/repo&force=1", "owner/repo", "plugin", "hermes", nil, true},
		{"hermes://plugin/install/?repo=owner%2Frepo&enable=0&force=yes", "owner/repo", "plugin", "hermes", &no, true},
		{"hermes://plugin/install?enable=TRUE&repo=my-org/my.repo_x", "my-org/my.repo_x", "plugin", "hermes", &yes, false},
		{"hermes://plugin/install?repo=o/r&enable=&force=", "o/r", "plugin", "hermes", nil, false},
		{"hermes://plugin/install?identifier=b/two", "b/two", "plugin", "hermes", nil, false},
		{"hermes://plugin/install?repo=owner/repo.git", "owner/repo", "plugin", "hermes", nil, false},
		{"hermes://plugin-agent/c/three", "c/three", "plugin-agent", "hermes", nil, false},
		{"hermes://plugin-agent/owner%2Frepo", "owner/repo", "plugin-agent", "hermes", nil, false},
		{"hermes://plugin-agent/install?repo=owner/repo&enable=1", "owner/repo", "plugin-agent", "hermes", &yes, false},
		{"hermes-dev://plugin/install?repo=owner/repo", "owner/repo", "plugin", "hermes-dev", nil, false},
		{"HERMES://Plugin/install?repo=Owner/Repo", "Owner/Repo", "plugin", "hermes", nil, false},
	}
	for _, c := range cases {
		l, err := Parse(c.raw)
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if l.Slug() != c.slug || l.Kind != c.kind || l.Scheme != c.scheme || l.Force != c.force || (l.Enable == nil) != (c.enable == nil) || (l.Enable != nil && *l.Enable != *c.enable) {
			t.Errorf("%s: %+v", c.raw, l)
		}
	}
	l, _ := Parse("hermes://plugin/install?repo=owner/repo")
	if l.BrowseURL() != "https://github.com/owner/repo" || l.CloneURL() != "https://github.com/owner/repo.git" {
		t.Fatal(l.BrowseURL(), l.CloneURL())
	}
}

// Injected characters, other hosts, local paths, percent-encoded tricks, unknown
// parameters: all refused, each with a reason.
func TestParseRefuses(t *testing.T) {
	cases := []struct{ raw, want string }{
		{"hermes://plugin/install?repo=owner/repo;rm -rf ~", "characters a plugin install link never has"},
		{"hermes://plugin/install?repo=owner/repo;id", "characters"},
		{"hermes://plugin/install?repo=$(id)/repo", "characters"},
		{"hermes://plugin/install?repo=`id`/repo", "characters"},
		{"hermes://plugin/install?repo=owner/repo|sh", "characters"},
		{"hermes://plugin/install?repo=owner/re po", "characters"},
		{"hermes://plugin/install?repo=owner/repo\n", "characters"},
		{"hermes://plugin/install?repo=owner/repo'", "characters"},
		{"hermes://plugin/install?repo=owner%2Frepo%3Bid", "repository name \"repo;id\" is not valid"},
		{"hermes://plugin/install?repo=owner%2Frepo%24%28id%29", "is not valid"},
		{"hermes://plugin/install?repo=owner/repo%20x", "is not valid"},
		{"hermes://plugin/install?repo=owner/repo%0Aid", "is not valid"},
		{"hermes://plugin/install?repo=owner/repo%00", "is not valid"},
		{"hermes://plugin/install?repo=..%2F..%2Fetc", "not owner/repo"},
		{"hermes://plugin/install?repo=owner/..", "not valid"},
		{"hermes://plugin/install?repo=owner/.hidden", "not valid"},
		{"hermes://plugin/install?repo=%2E%2E/repo", "not owner/repo"},
		{"hermes://plugin/install?repo=owner%252Frepo", "exactly one '/'"},
		{"hermes://plugin/install?repo=owner/repo/sub", "exactly one '/'"},
		{"hermes://plugin/install?repo=/etc/passwd", "no URLs, other hosts or local paths"},
		{"hermes://plugin/install?repo=~/plugins/x", "local paths"},
		{"hermes://plugin/install?repo=%7E/x", "local paths"},
		{"hermes://plugin/install?repo=file:///tmp/x", "local paths"},
		{"hermes://plugin/install?repo=https://evil.example.com/o/r", "other hosts"},
		{"hermes://plugin/install?repo=https%3A%2F%2Fevil.example.com%2Fo%2Fr", "other hosts"},
		{"hermes://plugin/install?repo=git@evil.example.com:o/r", "characters"},
		{"hermes://plugin/install?repo=evil.example.com:o/r", "other hosts"},
		{"hermes://plugin/install?repo=-owner/repo", "owner \"-owner\" is not a GitHub"},
		{"hermes://plugin/install?repo=owner/repo&ref=main", "unknown parameter \"ref\""},
		{"hermes://plugin/install?repo=owner/repo&url=https://x", "unknown parameter \"url\""},
		{"hermes://plugin/install?repo=a/b&repo=c/d", "given twice"},
		{"hermes://plugin/install?repo=a/b&identifier=c/d", "both repo and identifier"},
		{"hermes://plugin/install?repo=a/b&enable=maybe", "enable=\"maybe\" is not 1 or 0"},
		{"hermes://plugin/install?repo=a/b&force=%", "not valid percent-encoding"},
		{"hermes://plugin/install", "names no repository"},
		{"hermes://plugin/uninstall?repo=a/b", "plugin/uninstall is not a known action"},
		{"hermes://plugin-desktop/owner/repo", "installs a Hermes Desktop plugin"},
		{"hermes://mcp/install?name=x", "not a plugin install link"},
		{"hermes://evil.example.com/plugin/install?repo=a/b", "not a plugin install link"},
		{"hermes://user@plugin/install?repo=a/b", "characters"},
		{"hermes://plugin:80/install?repo=a/b", "not a plugin link kind"},
		{"hermes://plugin-agent/a/b?repo=c/d", "both in its path and in repo="},
		{"hermes://plugin-agent/a%2F..%2F..", "exactly one '/'"},
		{"hermes://plugin/install?repo=a/b#frag", "characters"},
		{"https://github.com/owner/repo", "scheme \"https\" is not hermes://"},
		{"hermes:plugin/install?repo=a/b", "not a hermes:// link"},
		{"file:///etc/passwd", "is not hermes://"},
		{"hermes://plugin/install?repo=" + strings.Repeat("a", 3000), "bytes long"},
		{"", "characters"},
	}
	for _, c := range cases {
		_, err := Parse(c.raw)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "Refusing this link: ") {
			t.Errorf("%q: %v, want %q", c.raw, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("hermes://plugin/install?repo=owner/repo&enable=1")
	f.Add("hermes://plugin-agent/owner%2Frepo")
	f.Fuzz(func(t *testing.T, raw string) {
		l, err := Parse(raw)
		if err != nil {
			return
		}
		// Whatever is accepted is a plain GitHub owner/repo.
		if !ownerRE.MatchString(l.Owner) || !repoRE.MatchString(l.Repo) || strings.HasPrefix(l.Repo, ".") {
			t.Fatalf("%q accepted as %+v", raw, l)
		}
	})
}

func TestDesktopEntry(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteDesktopEntry(filepath.Join(dir, "applications"), "/usr/local/bin/hermes")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	s := string(b)
	for _, want := range []string{"[Desktop Entry]\n", "Exec=/usr/local/bin/hermes open-url --wait %u\n", "Terminal=true\n", "MimeType=x-scheme-handler/hermes;x-scheme-handler/hermes-dev;\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 || filepath.Base(p) != "hermes-url-handler.desktop" {
		t.Fatal(st.Mode(), p)
	}
	cases := map[string]string{
		"/opt/My Apps/hermes":  `"/opt/My Apps/hermes"`,
		`/opt/a"b$c/hermes`:    `"/opt/a\\"b\\$c/hermes"`,
		"/opt/100%/hermes":     "/opt/100%%/hermes",
		"/home/u/bin/hermes-2": "/home/u/bin/hermes-2",
	}
	for in, want := range cases {
		if got := execArg(in); got != want {
			t.Errorf("execArg(%q) = %s, want %s", in, got, want)
		}
	}
	env := map[string]string{"HOME": "/home/u"}
	if d, _ := ApplicationsDir(func(k string) string { return env[k] }); d != "/home/u/.local/share/applications" {
		t.Fatal(d)
	}
	env["XDG_DATA_HOME"] = "/data"
	if d, _ := ApplicationsDir(func(k string) string { return env[k] }); d != "/data/applications" {
		t.Fatal(d)
	}
}
