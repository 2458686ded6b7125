package install

import (
	"strings"
	"testing"
)

func TestParseIdentifier(t *testing.T) {
	tests := []struct {
		in, url, subdir, canon, err string
	}{
		{in: "owner/repo", url: "https://github.com/owner/repo.git", canon: "https://github.com/owner/repo.git"},
		{in: "owner/repo/plugins/relay", url: "https://github.com/owner/repo.git", subdir: "plugins/relay", canon: "https://github.com/owner/repo.git#plugins/relay"},
		{in: "https://github.com/o/r", url: "https://github.com/o/r"},
		{in: "https://github.com/o/r/tree/main/plugins/x", url: "https://github.com/o/r.git", subdir: "plugins/x"},
		{in: "https://github.com/o/r/blob/main/README.md", url: "https://github.com/o/r.git"},
		{in: "https://github.com/o/r/tree/dev", url: "https://github.com/o/r.git"},
		{in: "https://gitlab.com/g/r.git#sub/dir", url: "https://gitlab.com/g/r.git", subdir: "sub/dir"},
		{in: "https://host/g/r.git/sub/dir", url: "https://host/g/r.git", subdir: "sub/dir"},
		{in: "https://user:tok@host/g/r.git?x=1", url: "https://user:tok@host/g/r.git?x=1", canon: "https://host/g/r.git"},
		{in: "git@github.com:o/r.git", url: "git@github.com:o/r.git"},
		{in: "ssh://git@host/o/r.git#p", url: "ssh://git@host/o/r.git", subdir: "p"},
		{in: "file:///tmp/r.git", url: "file:///tmp/r.git"},
		{in: "file:///tmp/r.git#a/../../x", err: "escapes the repository"},
		{in: "owner/repo/../x", err: "Invalid plugin identifier"},
		{in: "justaname", err: "Invalid plugin identifier: 'justaname'"},
		{in: "ftp://x/y", err: "Supported schemes"},
		{in: "/abs/path", err: "Invalid plugin identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseIdentifier(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.URL != tt.url || s.Subdir != tt.subdir {
				t.Fatalf("got %+v, want url %q subdir %q", s, tt.url, tt.subdir)
			}
			if tt.canon != "" && s.Canonical() != tt.canon {
				t.Fatalf("canonical %q, want %q", s.Canonical(), tt.canon)
			}
		})
	}
}

func TestValidateRef(t *testing.T) {
	good := "0123456789ABCDEF0123456789abcdef01234567"
	if got, err := ValidateRef(good); err != nil || got != strings.ToLower(good) {
		t.Fatalf("ValidateRef(%q) = %q, %v", good, got, err)
	}
	for _, bad := range []string{"main", "v1.2.0", "0123456", good + "0", "g123456789abcdef0123456789abcdef01234567", ""} {
		if _, err := ValidateRef(bad); err == nil || !strings.Contains(err.Error(), "--ref must be a full 40-character commit SHA.") {
			t.Errorf("ValidateRef(%q) = %v", bad, err)
		}
	}
}

func TestRepoName(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/o/my-plugin.git": "my-plugin",
		"git@host:o/thing.git":               "thing",
		"git@host:thing.git":                 "thing",
		"file:///x/y/z/":                     "z",
	} {
		if got := (Source{URL: in}).RepoName(); got != want {
			t.Errorf("RepoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	s := Redact("fatal: https://u:sekrit@host/x Authorization: Basic abcd== tokentoken", []string{"tokentoken"})
	for _, leak := range []string{"sekrit", "abcd==", "tokentoken"} {
		if strings.Contains(s, leak) {
			t.Errorf("%q leaks %q", s, leak)
		}
	}
}

// FuzzParseIdentifier: whatever the user types, an accepted identifier never names a
// subdirectory outside the repository, and its recorded source carries no password.
func FuzzParseIdentifier(f *testing.F) {
	for _, s := range []string{"owner/repo", "owner/repo/a/b", "https://github.com/o/r/tree/main/x", "https://u:p@h/r.git#s", "git@h:o/r.git", "file:///x.git#../y", "ssh://h/r.git/sub"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		src, err := ParseIdentifier(id)
		if err != nil {
			return
		}
		if strings.HasPrefix(src.Subdir, "/") || strings.Contains(src.Subdir, "\\") {
			t.Fatalf("%q: subdir %q", id, src.Subdir)
		}
		for _, seg := range strings.Split(src.Subdir, "/") {
			if seg == ".." {
				t.Fatalf("%q: subdir %q escapes", id, src.Subdir)
			}
		}
		if _, _, ok := urlUserinfo(ScrubURL(src.URL)); ok {
			t.Fatalf("%q: recorded source %q keeps credentials", id, src.Canonical())
		}
	})
}
