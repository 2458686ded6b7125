package install

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Growth is what a new version of a plugin declares that the installed one does
// not: the surface upstream asks the user to confirm before a catalog update.
type Growth struct {
	Tools, Hooks []string
}

// Empty reports whether nothing new is declared.
func (g Growth) Empty() bool { return len(g.Tools) == 0 && len(g.Hooks) == 0 }

// String lists the new tools and hooks: "tools: a, b; hooks: c".
func (g Growth) String() string {
	var parts []string
	if len(g.Tools) > 0 {
		parts = append(parts, "tools: "+strings.Join(g.Tools, ", "))
	}
	if len(g.Hooks) > 0 {
		parts = append(parts, "hooks: "+strings.Join(g.Hooks, ", "))
	}
	return strings.Join(parts, "; ")
}

// SurfaceGrowth compares the provides_tools and provides_hooks of two manifests;
// old nil (unreadable) counts as declaring nothing.
func SurfaceGrowth(old, new *manifest.Manifest) Growth {
	var was manifest.Manifest
	if old != nil {
		was = *old
	}
	added := func(before, after []string) []string {
		var out []string
		for _, x := range after {
			if !slices.Contains(before, x) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		return out
	}
	return Growth{Tools: added(was.ProvidesTools, new.ProvidesTools), Hooks: added(was.ProvidesHooks, new.ProvidesHooks)}
}

// NotAppliedError is an update that declares more than the installed plugin and
// was not confirmed: nothing was changed.
type NotAppliedError struct {
	Name   string
	Growth Growth
	// Asked is false when nobody could be asked (no terminal).
	Asked bool
}

func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("the update of %s declares new %s; it was not applied", e.Name, e.Growth)
}

// confirmGrowth checks an update's tree against the installed plugin it replaces.
func confirmGrowth(req Request, name, target string, m *manifest.Manifest) error {
	if name != req.Replaces {
		return userErr("The new commit's plugin.yaml names the plugin '%s', not '%s'; nothing was changed. Reinstall it under its new name to switch: `hermes plugins remove %s`, then install it again.", name, req.Replaces, req.Replaces)
	}
	old, _, err := manifest.LoadDir(target)
	if err != nil {
		old = nil
	}
	g := SurfaceGrowth(old, m)
	if g.Empty() {
		return nil
	}
	if req.ConfirmGrowth == nil {
		return &NotAppliedError{Name: name, Growth: g}
	}
	if !req.ConfirmGrowth(g) {
		return &NotAppliedError{Name: name, Growth: g, Asked: true}
	}
	return nil
}
