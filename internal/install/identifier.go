package install

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Source is where a plugin comes from: a git URL and an optional subdirectory of the
// repository that holds the plugin.
type Source struct {
	URL    string // git URL, never carrying credentials
	Subdir string // slash-separated path inside the repository, "" for the root
}

// Canonical is the source recorded in install metadata: the URL with credentials,
// query and fragment removed, plus "#<subdir>" when there is one.
func (s Source) Canonical() string {
	u := ScrubURL(s.URL)
	if s.Subdir != "" {
		return u + "#" + s.Subdir
	}
	return u
}

// RepoName is the last path component of the URL without ".git": the plugin name
// when neither the manifest nor a subdirectory names it.
func (s Source) RepoName() string {
	u := strings.TrimRight(s.URL, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	return strings.TrimSuffix(u, ".git")
}

// Insecure reports whether the URL is fetched without transport security or from
// the local disk (upstream warns about both).
func (s Source) Insecure() bool {
	return strings.HasPrefix(s.URL, "http://") || strings.HasPrefix(s.URL, "file://")
}

// IsHTTP reports whether credentials may be attached (https and http only; ssh
// sources authenticate through the ssh agent).
func (s Source) IsHTTP() bool {
	return strings.HasPrefix(s.URL, "https://") || strings.HasPrefix(s.URL, "http://")
}

var shaRE = lazyre.New(`^[0-9a-fA-F]{40}$`)

// ErrRefNotSHA is the error for a --ref that is not a full commit SHA.
var ErrRefNotSHA = errors.New("--ref must be a full 40-character commit SHA.")

// ValidateRef accepts only a full 40-hex commit SHA (tags, branches and short SHAs
// are refused: they can move or become ambiguous) and returns it lower-cased.
func ValidateRef(ref string) (string, error) {
	if !shaRE.MatchString(ref) {
		return "", fmt.Errorf("%w Got %q: tags, branch names and abbreviated SHAs are not accepted; pin the full commit (git rev-parse <ref>)", ErrRefNotSHA, ref)
	}
	return strings.ToLower(ref), nil
}

// IsSHA reports whether s is a full 40-hex commit SHA.
func IsSHA(s string) bool { return shaRE.MatchString(s) }

var schemes = []string{"https://", "http://", "git@", "ssh://", "file://"}

// githubSegments are the GitHub browser-URL path segments after owner/repo that
// mean "this repository" (tree/<branch>/<path> also names a subdirectory).
var githubSegments = map[string]bool{
	"actions": true, "blob": true, "commit": true, "commits": true, "issues": true,
	"pull": true, "pulls": true, "releases": true, "tree": true, "wiki": true,
}

var shorthandPart = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// ParseIdentifier turns what the user typed into a Source: a git URL (https, http,
// ssh, git@host:, file), optionally with a "#subdir" fragment or ".git/<subdir>"
// suffix, a GitHub browser URL (…/tree/<branch>/<path> names a subdirectory), or the
// shorthand owner/repo[/sub/dir].
func ParseIdentifier(id string) (Source, error) {
	id = strings.TrimSpace(id)
	invalid := fmt.Errorf("Invalid plugin identifier: '%s'. Use a Git URL or 'owner/repo' shorthand (optionally with a subdirectory: 'owner/repo/path/to/plugin').", id)
	for _, s := range schemes {
		if strings.HasPrefix(id, s) {
			return parseURL(id)
		}
	}
	if strings.Contains(id, "://") {
		return Source{}, fmt.Errorf("%w Supported schemes: https://, http://, ssh://, git@host:, file://", invalid)
	}
	parts := strings.Split(strings.Trim(id, "/"), "/")
	if len(parts) < 2 || strings.HasPrefix(id, "/") || strings.HasPrefix(id, ".") {
		return Source{}, invalid
	}
	for _, p := range parts {
		if !shorthandPart.MatchString(p) || p == "." || p == ".." {
			return Source{}, invalid
		}
	}
	src := Source{URL: "https://github.com/" + parts[0] + "/" + strings.TrimSuffix(parts[1], ".git") + ".git"}
	if len(parts) > 2 {
		src.Subdir = strings.Join(parts[2:], "/")
	}
	return checkSubdir(src)
}

func parseURL(id string) (Source, error) {
	src := Source{URL: id}
	if i := strings.IndexByte(id, '#'); i >= 0 {
		src.URL, src.Subdir = id[:i], strings.Trim(id[i+1:], "/")
	}
	if strings.HasPrefix(src.URL, "https://") || strings.HasPrefix(src.URL, "http://") {
		u, err := url.Parse(src.URL)
		if err != nil || u.Host == "" {
			return Source{}, fmt.Errorf("Invalid plugin identifier: '%s': not a valid URL", id)
		}
		host := strings.ToLower(u.Hostname())
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		if (host == "github.com" || host == "www.github.com") && len(segs) >= 3 && githubSegments[segs[2]] {
			repo := strings.TrimSuffix(segs[1], ".git")
			sub := ""
			if segs[2] == "tree" && len(segs) > 4 {
				sub = strings.Join(segs[4:], "/") // the branch is ignored: install takes the default branch or --ref
			}
			src.URL = "https://github.com/" + segs[0] + "/" + repo + ".git"
			if src.Subdir == "" {
				src.Subdir = sub
			}
			return checkSubdir(src)
		}
	}
	if src.Subdir == "" {
		if i := strings.Index(src.URL, ".git/"); i >= 0 && i+5 < len(src.URL) {
			src.URL, src.Subdir = src.URL[:i+4], strings.Trim(src.URL[i+5:], "/")
		}
	}
	return checkSubdir(src)
}

// checkSubdir refuses subdirectories that could leave the repository.
func checkSubdir(src Source) (Source, error) {
	if src.Subdir == "" {
		return src, nil
	}
	if strings.HasPrefix(src.Subdir, "/") || strings.Contains(src.Subdir, "\\") || strings.ContainsRune(src.Subdir, 0) {
		return Source{}, fmt.Errorf("subdirectory %q escapes the repository: use a relative path inside it", src.Subdir)
	}
	for _, seg := range strings.Split(src.Subdir, "/") {
		if seg == ".." {
			return Source{}, fmt.Errorf("subdirectory %q escapes the repository: '..' is not allowed", src.Subdir)
		}
	}
	src.Subdir = path.Clean(src.Subdir)
	if src.Subdir == "." {
		src.Subdir = ""
	}
	return src, nil
}

// ScrubURL removes user info, query and fragment from http(s) URLs so nothing secret
// is recorded or printed; other URLs are returned unchanged.
func ScrubURL(raw string) string {
	if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "http://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}

// urlUserinfo returns the credentials embedded in an http(s) URL, if any.
func urlUserinfo(raw string) (user, pass string, ok bool) {
	if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "http://") {
		return "", "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return "", "", false
	}
	p, _ := u.User.Password()
	if p == "" {
		return "", u.User.Username(), u.User.Username() != ""
	}
	return u.User.Username(), p, true
}

// origin is scheme://host[:port] of an http(s) URL: the scope of http.<origin>/.extraheader.
func origin(raw string) (scheme, host string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", "", false
	}
	return u.Scheme, u.Host, true
}
