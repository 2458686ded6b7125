package cli

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestNewCmdPlugins(t *testing.T) {
	tests := []struct {
		name    string
		tty     bool
		args    []string
		wantErr string
		wantOut string
	}{
		{name: "not an action", args: []string{"frobnicate"}, wantErr: "Unknown plugins action: frobnicate\nRun 'hermes plugins --help' for the actions."},
		{name: "close to an action", args: []string{"lst"}, wantErr: "Unknown plugins action: lst\nDid you mean list?\n"},
		// Upstream prints this and exits 0; the screen itself is tested on a real terminal.
		{name: "no action, no terminal", wantOut: "Interactive mode requires a terminal.\nUse: hermes plugins list | enable NAME | disable NAME | show NAME\n"},
		{name: "no action, output not a terminal", tty: true, wantOut: "Interactive mode requires a terminal.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			f.IO.InTTY, f.IO.OutTTY = tt.tty, false
			var stdout bytes.Buffer
			f.IO.Out = &stdout
			var out bytes.Buffer
			cmd := newCmdPlugins(f)
			cmd.SetArgs(tt.args)
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			_, err := cmd.ExecuteC()
			if checkErr(t, err, tt.wantErr) {
				return
			}
			if got := stdout.String(); !strings.HasPrefix(got, tt.wantOut) {
				t.Fatalf("output %q, want it to start with %q", got, tt.wantOut)
			}
		})
	}
}

func TestNewCmdPluginsChildren(t *testing.T) {
	var got []string
	for _, c := range newCmdPlugins(testFactory()).Commands() {
		got = append(got, c.Name())
	}
	sort.Strings(got)
	want := []string{"browse", "capabilities", "disable", "enable", "info", "install", "list", "pack", "remove", "repair-metadata", "scan", "search", "show", "update"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("children %v, want %v", got, want)
	}
}

func TestNewCmdPluginsList(t *testing.T) {
	checkParses(t, newCmdPluginsList, []parseCase[listOptions]{
		{name: "no flags"},
		{name: "enabled", args: []string{"--enabled"}, want: listOptions{EnabledOnly: true}},
		{name: "user and no-bundled", args: []string{"--user", "--no-bundled"}, want: listOptions{UserOnly: true, NoBundled: true}},
		{name: "plain", args: []string{"--plain"}, want: listOptions{Plain: true}},
		{name: "json", args: []string{"--json"}, want: listOptions{JSON: true}},
		{name: "json=false", args: []string{"--json=false", "--enabled"}, want: listOptions{EnabledOnly: true}},
		{name: "an argument", args: []string{"foo"}, wantErr: `unknown command "foo" for "list"`},
		{name: "unknown flag", args: []string{"--all"}, wantErr: errUnknownFlag},
	})
}

func TestListFilters(t *testing.T) {
	o := listOptions{EnabledOnly: true, NoBundled: true}
	if got := strings.Join(o.filters(), " "); got != "--enabled --no-bundled" {
		t.Fatalf("filters %q", got)
	}
}

func TestNewCmdPluginsEnable(t *testing.T) {
	allow, deny := true, false
	checkParses(t, newCmdPluginsEnable, []parseCase[enableOptions]{
		{name: "name", args: []string{"observability/langfuse"}, want: enableOptions{Name: "observability/langfuse"}},
		{name: "allow", args: []string{"x", "--allow-tool-override"}, want: enableOptions{Name: "x", ToolOverride: &allow}},
		{name: "deny", args: []string{"--no-allow-tool-override", "x"}, want: enableOptions{Name: "x", ToolOverride: &deny}},
		{name: "allow and deny", args: []string{"x", "--allow-tool-override", "--no-allow-tool-override"}, wantErr: errExclusive},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"x", "--yes"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsDisable(t *testing.T) {
	checkParses(t, newCmdPluginsDisable, []parseCase[disableOptions]{
		{name: "name", args: []string{"calc"}, want: disableOptions{Name: "calc"}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "a flag of enable", args: []string{"calc", "--allow-tool-override"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsShow(t *testing.T) {
	checkParses(t, newCmdPluginsShow, []parseCase[showOptions]{
		{name: "name", args: []string{"calc"}, want: showOptions{Name: "calc"}},
		{name: "json", args: []string{"--json", "calc"}, want: showOptions{Name: "calc", JSON: true}},
		{name: "no name", args: []string{"--json"}, wantErr: "accepts 1 arg(s), received 0"},
		{name: "unknown flag", args: []string{"calc", "--plain"}, wantErr: errUnknownFlag},
	})
}
