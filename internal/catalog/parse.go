package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/limits"
)

var (
	ghRepoRE = lazyre.New(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
)

// ErrHTML is a document that is an HTML page (a captive portal, a login or error
// page) where JSON was expected.
var ErrHTML = errors.New("got an HTML page, not JSON (a proxy, login or error page?)")

// docKind sniffs the first byte: HTML pages are named as such rather than reported
// as a JSON syntax error at offset 1.
func docKind(data []byte) (byte, error) {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	if len(t) == 0 {
		return 0, errors.New("empty document")
	}
	switch t[0] {
	case '{', '[':
		return t[0], nil
	case '<':
		return 0, ErrHTML
	}
	return 0, fmt.Errorf("not JSON (starts with %q)", firstLine(t))
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 40 {
		b = append(b[:40:40], "..."...)
	}
	return string(b)
}

func syntaxErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON at byte %d: %w", se.Offset, err)
	}
	return fmt.Errorf("not valid JSON: %w", err)
}

// indexEntry is one community-index row as decoded; validation happens after.
type indexEntry struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Author       string   `json:"author"`
	Tags         []string `json:"tags"`
	Repo         string   `json:"repo"`
	Ref          string   `json:"ref"`
	Subdir       *string  `json:"subdir"`
	Homepage     string   `json:"homepage"`
	Capabilities []string `json:"capabilities"`
	APIVersion   *float64 `json:"api_version"`
	AddedAt      string   `json:"added_at"`
}

// checkLimits bounds a document before the JSON decoder builds it; the caller's
// message names the file or URL.
func checkLimits(data []byte, k limits.Kind) error {
	err := limits.CheckJSON(data, "", k)
	if le := (*limits.Error)(nil); errors.As(err, &le) {
		return le.Bare()
	}
	return err
}

// ParseIndex reads a community index: {"plugins":[...]} (schema_version and
// generated_at optional) or a bare list. Invalid entries are skipped and described
// in the warnings; only a document that is not an index at all is an error.
func ParseIndex(data []byte) ([]Entry, []string, error) {
	if err := checkLimits(data, limits.Index); err != nil {
		return nil, nil, err
	}
	kind, err := docKind(data)
	if err != nil {
		return nil, nil, err
	}
	var rows []json.RawMessage
	if kind == '[' {
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, nil, syntaxErr(err)
		}
	} else {
		// One pass straight into the rows (a RawMessage of the list, then the list,
		// would copy 5 MB twice).
		var doc struct {
			Plugins *[]json.RawMessage `json:"plugins"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field == "plugins" {
				return nil, nil, errors.New(`not a plugin index: "plugins" is not a list`)
			}
			return nil, nil, syntaxErr(err)
		}
		if doc.Plugins == nil {
			return nil, nil, errors.New(`not a plugin index: no "plugins" list`)
		}
		rows = *doc.Plugins
	}
	out := make([]Entry, 0, len(rows))
	var warns []string
	for i, raw := range rows {
		e, err := indexRow(raw)
		if err != nil {
			warns = append(warns, fmt.Sprintf("index entry %s skipped: %v", label(e.Name, i), err))
			continue
		}
		out = append(out, e)
	}
	return out, warns, nil
}

func label(name string, i int) string {
	if name != "" {
		return fmt.Sprintf("'%s' (#%d)", name, i+1)
	}
	return fmt.Sprintf("#%d", i+1)
}

// decodeRow decodes one row into v; a malformed row still yields its name (when
// it has one) so the warning can say which entry was skipped.
func decodeRow(raw json.RawMessage, v any) (Entry, error) {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return Entry{}, nil
	}
	var probe struct {
		Name any `json:"name"`
	}
	_ = json.Unmarshal(raw, &probe)
	name, _ := probe.Name.(string)
	return Entry{Name: name}, fmt.Errorf("malformed (%v)", typeErr(err))
}

func indexRow(raw json.RawMessage) (Entry, error) {
	var r indexEntry
	if bad, err := decodeRow(raw, &r); err != nil {
		return bad, err
	}
	e := Entry{
		Name: strings.TrimSpace(r.Name), Description: r.Description, Author: r.Author, Tags: r.Tags,
		Repo: strings.TrimSpace(r.Repo), Homepage: r.Homepage, Labels: r.Capabilities, AddedAt: r.AddedAt,
		Origin: OriginIndex,
	}
	if r.APIVersion != nil {
		e.APIVersion = int(*r.APIVersion)
	}
	if err := checkName(e.Name, isBareNameChar); err != nil {
		return e, err
	}
	switch {
	case e.Repo == "":
		return e, errors.New("no repo")
	case strings.HasPrefix(e.Repo, "http://"):
		return e, fmt.Errorf("repo %q is plain http://: refused (index repos are GitHub owner/name)", e.Repo)
	case strings.HasPrefix(e.Repo, "https://github.com/"):
		e.Repo = strings.TrimSuffix(strings.TrimPrefix(e.Repo, "https://github.com/"), ".git")
	}
	if !ghRepoRE.MatchString(e.Repo) || strings.Contains(e.Repo, "..") {
		return e, fmt.Errorf("repo %q is not owner/name", e.Repo)
	}
	ref, err := checkSHA("ref", r.Ref)
	if err != nil {
		return e, err
	}
	e.Ref = ref
	if r.Subdir != nil {
		if e.Subdir, err = checkSubdir(*r.Subdir); err != nil {
			return e, err
		}
	}
	return e, nil
}

func typeErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is %s, expected %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// The name and SHA shapes are checked by hand: as regexps their counted repeats
// ({1,64}, {40}) compile into that many copies, ~1 ms of every search.

// allIn reports whether s has min..max bytes, each accepted by ok.
func allIn(s string, min, max int, ok func(c byte) bool) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isBareNameChar is [A-Za-z0-9_.-], upstream's index name alphabet.
func isBareNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// isCatalogNameChar is [a-z0-9_-], the curated catalog's name alphabet.
func isCatalogNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func checkName(name string, ok func(c byte) bool) error {
	switch {
	case name == "":
		return errors.New("no name")
	case !allIn(name, 1, 64, ok) || strings.HasPrefix(name, "."):
		return fmt.Errorf("name %q is not a valid plugin name (letters, digits, '-', '_', up to 64)", name)
	}
	return nil
}

// checkSHA accepts only a full commit SHA: a short one can become ambiguous and a
// tag or branch can move, so neither pins a reviewed commit.
func checkSHA(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case allIn(v, 40, 40, isHex):
		return strings.ToLower(v), nil
	case v == "":
		return "", fmt.Errorf("no %s (a 40-character commit SHA is required)", field)
	case allIn(v, 4, 39, isHex):
		return "", fmt.Errorf("%s %q is a short SHA: a full 40-character commit SHA is required", field, v)
	}
	return "", fmt.Errorf("%s %q is not a 40-character commit SHA (tags and branches can move)", field, v)
}

func checkSubdir(s string) (string, error) {
	s = strings.Trim(strings.TrimSpace(s), "/")
	if s == "" {
		return "", nil
	}
	if strings.Contains(s, "\\") || strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("subdir %q is not a relative path", s)
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			return "", fmt.Errorf("subdir %q leaves the repository", s)
		}
	}
	return path.Clean(s), nil
}

// catalogEntry is one curated-catalog row as decoded.
type catalogEntry struct {
	Name           string   `json:"name"`
	Repo           string   `json:"repo"`
	SHA            string   `json:"sha"`
	Subdir         *string  `json:"subdir"`
	Description    string   `json:"description"`
	Maintainer     string   `json:"maintainer"`
	Tier           string   `json:"tier"`
	RequiresHermes string   `json:"requires_hermes"`
	DocsURL        string   `json:"docs_url"`
	Platforms      []string `json:"platforms"`
	Category       string   `json:"category"`
	Version        string   `json:"version"`
	Image          string   `json:"image"`
	Tags           []string `json:"tags"`
	Capabilities   *struct {
		Tools      []string `json:"provides_tools"`
		Hooks      []string `json:"provides_hooks"`
		Middleware []string `json:"provides_middleware"`
		Env        []string `json:"requires_env"`
	} `json:"capabilities"`
}

type removedRow struct {
	Name   string `json:"name"`
	Repo   string `json:"repo"`
	Reason string `json:"reason"`
	Date   string `json:"date"`
}

// ParseCatalog reads the curated catalog's live JSON: {"entries":[...],"removed":[...]}.
func ParseCatalog(data []byte) ([]Entry, []Removed, []string, error) {
	if err := checkLimits(data, limits.Catalog); err != nil {
		return nil, nil, nil, err
	}
	kind, err := docKind(data)
	if err != nil {
		return nil, nil, nil, err
	}
	if kind != '{' {
		return nil, nil, nil, errors.New(`not a plugin catalog: expected {"entries": [...], "removed": [...]}`)
	}
	var doc struct {
		Entries json.RawMessage `json:"entries"`
		Removed json.RawMessage `json:"removed"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, nil, syntaxErr(err)
	}
	var rows []json.RawMessage
	if len(doc.Entries) == 0 || json.Unmarshal(doc.Entries, &rows) != nil {
		return nil, nil, nil, errors.New(`not a plugin catalog: no "entries" list`)
	}
	var out []Entry
	var warns []string
	for i, raw := range rows {
		e, err := catalogRow(raw)
		if err != nil {
			warns = append(warns, fmt.Sprintf("catalog entry %s skipped: %v", label(e.Name, i), err))
			continue
		}
		out = append(out, e)
	}
	removed, rwarns := parseRemoved(doc.Removed)
	return out, removed, append(warns, rwarns...), nil
}

// parseRemoved reads the catalog's "removed" list; rows without a name or a repo
// are skipped with a warning.
func parseRemoved(list json.RawMessage) ([]Removed, []string) {
	if len(list) == 0 || string(list) == "null" {
		return nil, nil
	}
	var removed []Removed
	var warns []string
	var rr []json.RawMessage
	if err := json.Unmarshal(list, &rr); err != nil {
		warns = append(warns, `catalog "removed" is not a list; ignored`)
	}
	for i, raw := range rr {
		var r removedRow
		if err := json.Unmarshal(raw, &r); err != nil || (strings.TrimSpace(r.Name) == "" && strings.TrimSpace(r.Repo) == "") {
			warns = append(warns, fmt.Sprintf("catalog removed row #%d ignored: it needs a name or a repo", i+1))
			continue
		}
		removed = append(removed, Removed{Name: strings.TrimSpace(r.Name), Repo: strings.TrimSpace(r.Repo), Reason: r.Reason, Date: r.Date})
	}
	return removed, warns
}

func catalogRow(raw json.RawMessage) (Entry, error) {
	var r catalogEntry
	if bad, err := decodeRow(raw, &r); err != nil {
		return bad, err
	}
	e := Entry{
		Name: strings.TrimSpace(r.Name), Description: r.Description, Author: r.Maintainer, Tags: r.Tags,
		Repo: strings.TrimSpace(r.Repo), Tier: strings.ToLower(strings.TrimSpace(r.Tier)), Category: r.Category,
		Version: r.Version, DocsURL: r.DocsURL, RequiresHermes: r.RequiresHermes, Image: r.Image,
		Platforms: r.Platforms, Origin: OriginCatalog,
	}
	if err := checkName(e.Name, isCatalogNameChar); err != nil {
		return e, err
	}
	switch {
	case e.Repo == "":
		return e, errors.New("no repo")
	case strings.HasPrefix(e.Repo, "http://"):
		return e, fmt.Errorf("repo %q is plain http://: catalog repos must use https://", e.Repo)
	case !strings.HasPrefix(e.Repo, "https://") || strings.ContainsAny(e.Repo, " \t\n#?@"):
		return e, fmt.Errorf("repo %q must be an https:// URL", e.Repo)
	}
	sha, err := checkSHA("sha", r.SHA)
	if err != nil {
		return e, err
	}
	e.Ref = sha
	switch e.Tier {
	case "":
		e.Tier = "community"
	case "official", "community":
	default:
		return e, fmt.Errorf("tier %q is neither official nor community", r.Tier)
	}
	if r.Subdir != nil {
		if e.Subdir, err = checkSubdir(*r.Subdir); err != nil {
			return e, err
		}
	}
	if c := r.Capabilities; c != nil {
		e.Tools, e.Hooks, e.Middleware, e.Env = c.Tools, c.Hooks, c.Middleware, c.Env
	}
	return e, nil
}
