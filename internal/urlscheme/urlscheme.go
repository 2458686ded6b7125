// Package urlscheme reads hermes:// one-click install links and writes the XDG
// desktop entry that lets a browser hand them to `hermes open-url`.
//
// A link comes from a web page, so it is parsed strictly: only the forms upstream
// documents, only owner/repo on GitHub, no unknown parameters, no characters a shell
// or a path could make something of. A parsed link never installs anything by itself;
// the CLI shows it and asks.
package urlscheme

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Schemes are the URL schemes handled: the release scheme and the dev-build one.
var Schemes = []string{"hermes", "hermes-dev"}

// MaxLength bounds a link; real ones are well under 200 bytes.
const MaxLength = 2048

// Link is a validated plugin install link.
type Link struct {
	Scheme string // hermes or hermes-dev
	Kind   string // plugin, or the legacy plugin-agent
	Owner  string
	Repo   string
	// Enable is nil when the link does not say (the user is asked), else enable=1/0.
	Enable *bool
	Force  bool
}

// Slug is owner/repo.
func (l *Link) Slug() string { return l.Owner + "/" + l.Repo }

// BrowseURL is the repository's page.
func (l *Link) BrowseURL() string { return "https://github.com/" + l.Slug() }

// CloneURL is what gets cloned.
func (l *Link) CloneURL() string { return "https://github.com/" + l.Slug() + ".git" }

// Error is a refused link, meant for the user as is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func refuse(format string, args ...any) error {
	return &Error{Msg: "Refusing this link: " + fmt.Sprintf(format, args...)}
}

var (
	// rawChars is every byte a well-formed link may contain before decoding.
	rawChars = lazyre.New(`^[A-Za-z0-9:/?&=%._~-]+$`)
	// GitHub: owner is alphanumeric with single inner hyphens, at most 39; repo is
	// alphanumerics, '.', '_', '-', at most 100.
	ownerRE = lazyre.New(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
	repoRE  = lazyre.New(`^[A-Za-z0-9._-]{1,100}$`)
)

var knownParams = map[string]bool{"repo": true, "identifier": true, "enable": true, "force": true}

// Parse validates a link. Accepted forms (reference: Hermes Desktop's deep links):
//
//	hermes://plugin/install?repo=owner/repo[&enable=1|0][&force=1|0]
//	hermes://plugin/install?identifier=owner/repo        (the desktop's older spelling)
//	hermes://plugin-agent/owner/repo[?enable=..&force=..] (legacy)
//	hermes://plugin-agent/install?repo=owner/repo         (legacy)
//
// and the same with hermes-dev://. Everything else is refused with the reason.
func Parse(raw string) (*Link, error) {
	if len(raw) > MaxLength {
		return nil, refuse("it is %d bytes long (at most %d)", len(raw), MaxLength)
	}
	if !rawChars.MatchString(raw) {
		return nil, refuse("it contains characters a plugin install link never has (spaces, quotes, shell or control characters): %q", raw)
	}
	i := strings.Index(raw, "://")
	if i <= 0 {
		return nil, refuse("it is not a hermes:// link")
	}
	scheme := strings.ToLower(raw[:i])
	if scheme != "hermes" && scheme != "hermes-dev" {
		return nil, refuse("scheme %q is not hermes:// or hermes-dev://", raw[:i])
	}
	rest := raw[i+3:]
	query := ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query = rest[:q], rest[q+1:]
	}
	kind, path, _ := strings.Cut(rest, "/")
	kind = strings.ToLower(kind)
	path = strings.TrimSuffix(path, "/") // a copy-paste artefact
	if strings.Contains(kind, "%") || strings.Contains(kind, ":") {
		return nil, refuse("the link's host %q is not a plugin link kind", kind)
	}
	l := &Link{Scheme: scheme, Kind: kind}
	var slug string
	switch kind {
	case "plugin":
		if path != "install" {
			return nil, refuse("%s://plugin/%s is not a known action (only plugin/install)", scheme, path)
		}
	case "plugin-agent":
		if path != "install" {
			// hermes://plugin-agent/owner/repo: the path is the repository.
			decoded, err := url.PathUnescape(path)
			if err != nil {
				return nil, refuse("the path is not valid percent-encoding")
			}
			slug = decoded
		}
	case "plugin-desktop":
		return nil, refuse("%s://plugin-desktop/… installs a Hermes Desktop plugin; this command installs agent plugins (use Hermes Desktop, or `hermes plugins install owner/repo` for the agent part)", scheme)
	case "":
		return nil, refuse("the link names no kind (expected %s://plugin/install?repo=owner/repo)", scheme)
	default:
		return nil, refuse("%s://%s/… is not a plugin install link (expected %s://plugin/install?repo=owner/repo)", scheme, kind, scheme)
	}
	params, err := parseQuery(query)
	if err != nil {
		return nil, err
	}
	repo, hasRepo := params["repo"]
	ident, hasIdent := params["identifier"]
	switch {
	case hasRepo && hasIdent:
		return nil, refuse("it gives both repo and identifier; a link names one repository")
	case hasIdent:
		repo, hasRepo = ident, true
	}
	if hasRepo {
		if slug != "" {
			return nil, refuse("it names a repository both in its path and in repo=")
		}
		slug = repo
	}
	if slug == "" {
		return nil, refuse("it names no repository (add repo=owner/repo)")
	}
	if l.Owner, l.Repo, err = splitSlug(slug); err != nil {
		return nil, err
	}
	if v, ok := params["enable"]; ok {
		b, err := flag("enable", v)
		if err != nil {
			return nil, err
		}
		if v != "" {
			l.Enable = &b
		}
	}
	if v, ok := params["force"]; ok {
		if l.Force, err = flag("force", v); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// parseQuery decodes k=v pairs: each key once, only known keys.
func parseQuery(q string) (map[string]string, error) {
	out := map[string]string{}
	if q == "" {
		return out, nil
	}
	for _, pair := range strings.Split(q, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, refuse("parameter %q is not valid percent-encoding", k)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, refuse("the value of %s is not valid percent-encoding", key)
		}
		if !knownParams[key] {
			return nil, refuse("unknown parameter %q (a plugin install link takes repo, enable and force)", key)
		}
		if _, dup := out[key]; dup {
			return nil, refuse("parameter %s is given twice", key)
		}
		out[key] = val
	}
	return out, nil
}

// splitSlug accepts exactly owner/repo on GitHub: no host, no scheme, no path, no
// dot segments, nothing a shell would read.
func splitSlug(s string) (string, string, error) {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, ".") || strings.Contains(s, "@") || strings.Contains(s, ":") {
		return "", "", refuse("repository %q is not owner/repo: links install from GitHub by owner/repo only (no URLs, other hosts or local paths)", s)
	}
	parts := strings.Split(s, "/")
	if len(parts) != 2 {
		return "", "", refuse("repository %q is not owner/repo (exactly one '/')", s)
	}
	owner, repo := parts[0], strings.TrimSuffix(parts[1], ".git")
	if !ownerRE.MatchString(owner) {
		return "", "", refuse("owner %q is not a GitHub user or organisation name (letters, digits, single hyphens)", owner)
	}
	if !repoRE.MatchString(repo) || repo == "." || repo == ".." || strings.HasPrefix(repo, ".") {
		return "", "", refuse("repository name %q is not valid (letters, digits, '.', '_', '-'; no leading dot)", repo)
	}
	return owner, repo, nil
}

func flag(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no", "":
		return false, nil
	}
	return false, refuse("%s=%q is not 1 or 0", name, v)
}
