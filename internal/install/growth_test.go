package install

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

func TestSurfaceGrowth(t *testing.T) {
	mf := func(tools, hooks []string) *manifest.Manifest {
		return &manifest.Manifest{ProvidesTools: tools, ProvidesHooks: hooks}
	}
	tests := []struct {
		name     string
		old, new *manifest.Manifest
		want     Growth
	}{
		{"same", mf([]string{"a"}, []string{"h"}), mf([]string{"a"}, []string{"h"}), Growth{}},
		{"fewer", mf([]string{"a", "b"}, []string{"h"}), mf([]string{"a"}, nil), Growth{}},
		{"reordered", mf([]string{"a", "b"}, nil), mf([]string{"b", "a"}, nil), Growth{}},
		{"a new tool and hook", mf([]string{"a"}, []string{"h"}), mf([]string{"a", "b"}, []string{"h", "k"}), Growth{Tools: []string{"b"}, Hooks: []string{"k"}}},
		{"listed twice counts once", mf(nil, nil), mf([]string{"b", "b"}, nil), Growth{Tools: []string{"b"}}},
		{"unreadable old declares nothing", nil, mf([]string{"a"}, []string{"h"}), Growth{Tools: []string{"a"}, Hooks: []string{"h"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SurfaceGrowth(tt.old, tt.new); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("SurfaceGrowth = %+v, want %+v", got, tt.want)
			}
		})
	}
	if s := (Growth{Tools: []string{"a", "b"}, Hooks: []string{"h"}}).String(); s != "tools: a, b; hooks: h" {
		t.Fatalf("String() = %q", s)
	}
}

// An update (Replaces) publishes only a tree of the same name, and one that
// declares more only when confirmed; refused, it leaves everything as it was.
func TestReplaceConfirmsGrowth(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("relay", "plugin.yaml", "name: relay\nprovides_tools: [ping]\n"))
	in, _ := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{URL: repo.URL(), Ref: first}); err != nil {
		t.Fatal(err)
	}
	grown := repo.Commit(map[string]string{"plugin.yaml": "name: relay\nprovides_tools: [ping, wipe]\nprovides_hooks: [pre_tool_call]\n"}, "grown")
	renamed := repo.Commit(map[string]string{"plugin.yaml": "name: other\nprovides_tools: [ping]\n"}, "renamed")
	manifestNow := func() string {
		b, err := os.ReadFile(filepath.Join(in.PluginsDir, "relay", "plugin.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	_, err := in.Install(bg, Request{URL: repo.URL(), Ref: renamed, Replaces: "relay"})
	if err == nil || !strings.Contains(err.Error(), "names the plugin 'other', not 'relay'") {
		t.Fatalf("renamed: %v", err)
	}
	var asked Growth
	for _, confirm := range []func(Growth) bool{nil, func(g Growth) bool { asked = g; return false }} {
		_, err = in.Install(bg, Request{URL: repo.URL(), Ref: grown, Replaces: "relay", ConfirmGrowth: confirm})
		var na *NotAppliedError
		if !errors.As(err, &na) || na.Asked != (confirm != nil) || na.Growth.String() != "tools: wipe; hooks: pre_tool_call" {
			t.Fatalf("not confirmed: %v", err)
		}
	}
	if asked.String() != "tools: wipe; hooks: pre_tool_call" {
		t.Fatalf("asked about %+v", asked)
	}
	if strings.Contains(manifestNow(), "wipe") || readMeta(t, in).Rows["relay"].Revision != first {
		t.Fatal("a refused update changed the plugin")
	}
	if got := dirListing(t, in.PluginsDir); !reflect.DeepEqual(got, []string{MetadataFile, "relay"}) {
		t.Fatalf("plugins dir %v", got)
	}
	if _, err := in.Install(bg, Request{URL: repo.URL(), Ref: grown, Replaces: "relay", ConfirmGrowth: func(Growth) bool { return true }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(manifestNow(), "wipe") || readMeta(t, in).Rows["relay"].Revision != grown {
		t.Fatal("a confirmed update was not applied")
	}
	if _, err := in.Install(bg, Request{URL: repo.URL(), Ref: grown, Replaces: "ghost"}); err == nil || !strings.Contains(err.Error(), "Plugin 'ghost' not found") {
		t.Fatalf("replacing a plugin that is not installed: %v", err)
	}
}
