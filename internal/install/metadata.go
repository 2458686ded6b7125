package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/google/renameio/v2"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/limits"
)

// MetadataFile is the install metadata's name inside the plugins directory.
const MetadataFile = ".install-metadata.json"

// Row is one plugin's provenance in .install-metadata.json. Keys this host does not
// know (written by other versions) are kept as they were.
type Row struct {
	Pinned       bool
	Revision     string
	Source       string
	UpdateURL    string
	Catalog      *CatalogRef
	AllowRemoved bool
	// Extra holds unknown keys verbatim.
	Extra map[string]json.RawMessage
}

// CatalogRef is the catalog provenance of a catalog install (§8.3 "catalog").
type CatalogRef struct {
	Name string `json:"name,omitempty"`
	Repo string `json:"repo,omitempty"`
	Tier string `json:"tier,omitempty"`
	Pin  string `json:"pin,omitempty"`
	SHA  string `json:"sha,omitempty"`
}

// MarshalJSON writes the row with sorted keys, omitting empty optional fields.
func (r Row) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for k, v := range r.Extra {
		m[k] = v
	}
	m["pinned"] = r.Pinned
	m["revision"] = r.Revision
	m["source"] = r.Source
	if r.UpdateURL != "" {
		m["update_url"] = r.UpdateURL
	}
	if r.Catalog != nil {
		m["catalog"] = r.Catalog
	}
	if r.AllowRemoved {
		m["allow_removed"] = true
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a row; a known key of the wrong type is an error (the caller
// reports the row rather than dropping it).
func (r *Row) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = Row{}
	take := func(key string, dst any) error {
		v, ok := raw[key]
		if !ok {
			return nil
		}
		delete(raw, key)
		if string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	for _, f := range []struct {
		k string
		d any
	}{{"pinned", &r.Pinned}, {"revision", &r.Revision}, {"source", &r.Source}, {"update_url", &r.UpdateURL}, {"catalog", &r.Catalog}, {"allow_removed", &r.AllowRemoved}} {
		if err := take(f.k, f.d); err != nil {
			return err
		}
	}
	if len(raw) > 0 {
		r.Extra = raw
	}
	return nil
}

// Metadata is the whole file: rows keyed by installed plugin directory name. Rows
// that do not decode are kept raw and written back unchanged.
type Metadata struct {
	Rows map[string]Row
	bad  map[string]json.RawMessage
}

// CorruptMetadataError reports an unreadable .install-metadata.json. Hermes never
// rewrites such a file (that would drop the pins it records).
type CorruptMetadataError struct {
	Path string
	Err  error
}

func (e *CorruptMetadataError) Error() string {
	return fmt.Sprintf("install metadata %s is corrupt (%v). It records where each plugin came from and which are pinned, so hermes left it untouched. Fix the JSON by hand, or run `hermes plugins repair-metadata` to move it aside and rebuild it from the installed git checkouts", e.Path, e.Err)
}

func (e *CorruptMetadataError) Unwrap() error { return e.Err }

// ReadMetadata reads path; a missing file is empty metadata.
func ReadMetadata(path string) (*Metadata, error) {
	md := &Metadata{Rows: map[string]Row{}}
	data, err := home.ReadFileLimit(path, limits.InstallMetadata.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return md, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read install metadata: %w", err)
	}
	if err := limits.CheckJSON(data, path, limits.InstallMetadata); err != nil {
		var le *limits.Error
		if errors.As(err, &le) {
			err = le.Bare()
		}
		return nil, &CorruptMetadataError{Path: path, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &CorruptMetadataError{Path: path, Err: errors.New("the file is empty")}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &CorruptMetadataError{Path: path, Err: errors.New("not a JSON object: " + err.Error())}
	}
	for name, v := range raw {
		var r Row
		if err := json.Unmarshal(v, &r); err != nil {
			if md.bad == nil {
				md.bad = map[string]json.RawMessage{}
			}
			md.bad[name] = v
			continue
		}
		md.Rows[name] = r
	}
	return md, nil
}

// BadRows names the rows that could not be read (kept as they are on write).
func (m *Metadata) BadRows() []string {
	var out []string
	for k := range m.bad {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Delete removes a row, readable or not.
func (m *Metadata) Delete(name string) {
	delete(m.Rows, name)
	delete(m.bad, name)
}

// Set stores a row, replacing an unreadable one of the same name.
func (m *Metadata) Set(name string, r Row) {
	delete(m.bad, name)
	m.Rows[name] = r
}

// Encode is upstream's format: indent 2, sorted keys, trailing newline.
func (m *Metadata) Encode() ([]byte, error) {
	all := map[string]any{}
	for k, v := range m.bad {
		all[k] = v
	}
	for k, v := range m.Rows {
		all[k] = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(all); err != nil {
		return nil, err
	}
	// Encoder sorts map keys; re-indent so nested raw rows share the layout.
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// WriteMetadata writes m to path atomically (temp file, fsync, rename).
func WriteMetadata(path string, m *Metadata) error {
	data, err := m.Encode()
	if err != nil {
		return fmt.Errorf("encode install metadata: %w", err)
	}
	if err := renameio.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write install metadata: %w", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Row returns the metadata row of an installed plugin (ok false: none).
func (in *Installer) Row(name string) (row Row, ok bool, err error) {
	md, err := ReadMetadata(in.metaPath())
	if err != nil {
		return Row{}, false, err
	}
	row, ok = md.Rows[name]
	return row, ok, nil
}
