package plugins

import (
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
)

// removals matches the non-bundled candidates against the catalog's kill list
// (upstream's gate step 7) for the gate, which takes the result as data. The
// list is read without the network: the cached catalog at any age, and the
// seed's rows. A plugin matches by its key, its manifest name, the catalog name
// it was installed under, or its install source; an allow_removed install
// record (--allow-removed) lets it load anyway. With no cached catalog this
// costs one stat (BenchmarkRemovals has the worst case).
func removals(cacheDir string, cands []*discovery.Candidate, read metadataFiles) map[string]discovery.Removal {
	nonBundled := false
	for _, c := range cands {
		if c.Source != discovery.SourceBundled {
			nonBundled = true
			break
		}
	}
	if !nonBundled {
		return nil
	}
	list := catalog.LoadKillList(cacheDir)
	if len(list) == 0 {
		return nil
	}
	kl := list.Matcher()
	byDir := map[string]*install.Metadata{}
	nameBuf := make([]string, 0, 3)
	var out map[string]discovery.Removal
	for _, c := range cands {
		if c.Source == discovery.SourceBundled {
			continue
		}
		names := nameBuf[:0]
		names = append(names, c.Key)
		if c.Manifest != nil && c.Manifest.Name != "" {
			names = append(names, c.Manifest.Name)
		}
		var row install.Row
		hasRow := false
		if i := strings.LastIndexByte(c.Dir, filepath.Separator); c.Source == discovery.SourceUser && i > 0 {
			// Discovery's dirs are clean <plugins dir>/<name>; the metadata is beside them.
			parent, base := c.Dir[:i], c.Dir[i+1:]
			md, seen := byDir[parent]
			if !seen {
				md = read.get(filepath.Join(parent, install.MetadataFile))
				byDir[parent] = md
			}
			if md != nil {
				row, hasRow = md.Rows[base]
			}
		}
		if hasRow && row.Catalog != nil && row.Catalog.Name != "" {
			names = append(names, row.Catalog.Name)
		}
		k, ok := kl.Match(names, row.Source)
		if !ok {
			continue
		}
		// Source is the git source even for a catalog install: the catalog may no
		// longer list the name, and a deliberate reinstall need not go through it.
		r := discovery.Removal{Reason: k.Reason, Date: k.Date, Allowed: row.AllowRemoved, Source: row.Source}
		if out == nil {
			out = map[string]discovery.Removal{}
		}
		out[c.Key] = r
	}
	return out
}

// metadataFiles are the install metadata files one discovery read, by path (nil:
// missing or unreadable), each parsed once: `plugins list` needs them too, for
// its source labels, and gets them through Manager.InstallMetadata.
type metadataFiles map[string]*install.Metadata

func (f metadataFiles) get(path string) *install.Metadata {
	md, seen := f[path]
	if !seen {
		md, _ = install.ReadMetadata(path)
		f[path] = md
	}
	return md
}
