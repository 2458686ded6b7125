package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins"
)

// updateFromCatalog is `plugins update` of a plugin installed by catalog (or
// community-index) name. Such a plugin is pinned to the commit the catalog
// listed, so there is nothing to pull: as upstream, it is re-pinned to the commit
// the catalog lists now, read fresh (the cache otherwise hides a new pin for
// hours). When the new commit declares tools or hooks the installed one does
// not, the user confirms on a terminal ("Apply this update? [y/N]"); without one
// the update is not applied. Everything the install path checks (the kill list,
// the scan, the name) holds, and anything refused changes nothing.
func updateFromCatalog(ctx context.Context, f *app.Factory, in *install.Installer, m *app.Host, p *plugins.Plugin, name string, row install.Row) error {
	w := f.IO.Out
	listed := row.Catalog.Name
	sayf(w, "Updating %s from the catalog (installed as '%s' at %s)...\n", name, listed, short(row.Revision))
	c, err := f.Catalog(ctx, true)
	if err != nil {
		return err
	}
	names := []string{name, listed}
	if p != nil && p.Candidate.Manifest != nil {
		names = append(names, p.Candidate.Manifest.Name)
	}
	if k, ok := c.Removed.Match(names, row.Source); ok && !row.AllowRemoved {
		return removedFail(name, k.Date, k.ReasonText(), row.Source, "was not updated")
	}
	e, err := c.Lookup(listed)
	if err != nil {
		var le *catalog.LookupError
		if errors.As(err, &le) && le.Ambiguous {
			return app.Failf("Error: the catalog now lists several plugins as '%s', so there is no one commit to update %s to; nothing was changed.\n%v", listed, name, err)
		}
		return app.Failf("Error: the catalog no longer lists '%s', so there is no reviewed commit to update %s to; nothing was changed.\nIt stays pinned at %s. To follow its repository instead, reinstall it: hermes plugins install %s --force --ref <40-character commit SHA>", listed, name, short(row.Revision), row.Source)
	}
	if src := (install.Source{URL: e.GitURL(), Subdir: e.Subdir}).Canonical(); src != row.Source {
		return app.Failf("Error: the catalog now lists '%s' from %s, but %s was installed from %s; it was not updated.\nTo switch to the new source, reinstall it by name: hermes plugins install %s --force", listed, src, name, row.Source, listed)
	}
	if strings.EqualFold(e.Ref, row.Revision) {
		sayf(w, "✓ Plugin %s is already up to date (the catalog's pin %s).\n", name, short(e.Ref))
		return nil
	}
	tier := e.Tier
	if e.Origin == catalog.OriginIndex {
		tier = "index"
	}
	req := install.Request{
		URL: e.GitURL(), Subdir: e.Subdir, Ref: e.Ref, Replaces: name,
		Catalog:  &install.CatalogRef{Name: e.Name, Repo: e.GitURL(), Tier: tier, Pin: e.Ref, SHA: e.Ref},
		KillList: c.Removed, AllowRemoved: row.AllowRemoved,
		ScanDisabled: !f.ScanOnInstall(),
	}
	req.ConfirmGrowth = func(g install.Growth) bool {
		sayf(w, "The catalog's new commit %s declares more than the installed one:\n", short(e.Ref))
		if len(g.Tools) > 0 {
			sayf(w, "  new tools: %s\n", strings.Join(g.Tools, ", "))
		}
		if len(g.Hooks) > 0 {
			sayf(w, "  new hooks: %s\n", strings.Join(g.Hooks, ", "))
		}
		yes, _ := f.IO.Confirm(ctx, "  Apply this update? [y/N]: ") // an interrupt is a no: the update stops
		return yes
	}
	if f.IO.CanPrompt() {
		req.ConfirmCaution = func(rep *install.ScanReport) bool {
			fmt.Fprintln(w, "⚠ Security scan flagged the update:")
			fmt.Fprintln(w, safeText(strings.TrimRight(rep.Report, "\n")))
			yes, _ := f.IO.Confirm(ctx, "  Apply it anyway? Only continue if you trust the source. [y/N]: ")
			return yes
		}
	}
	res, err := in.Install(ctx, req)
	var na *install.NotAppliedError
	switch {
	case errors.As(err, &na) && !f.IO.CanPrompt():
		return app.Failf("Update not applied: the catalog's new commit %s of %s declares new %s, which needs your confirmation.\nRun `hermes plugins update %s` on a terminal to review and confirm it; %s stays at %s.", short(e.Ref), name, na.Growth, name, name, short(row.Revision))
	case errors.As(err, &na):
		return app.Failf("Update not applied; %s stays at %s.", name, short(row.Revision))
	case err != nil:
		return installFail(err)
	}
	for _, warn := range res.Warnings {
		f.Warn(warn)
	}
	for _, cr := range res.Created {
		sayf(w, "Created %s from %s.example\n", cr, cr)
	}
	sayf(w, "✓ Plugin %s updated (%s → %s), pinned to the catalog's commit.\n", name, short(row.Revision), short(res.Revision))
	if p == nil {
		return nil
	}
	return updateConsent(ctx, f, m, p, res.Manifest)
}

// short is a commit's first 12 characters, as hermes prints them.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
