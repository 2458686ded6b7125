package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/app"
)

func TestNewCmdPluginsInstall(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	checkParses(t, newCmdPluginsInstall, []parseCase[installOptions]{
		{name: "owner/repo", args: []string{"owner/repo"}, want: installOptions{Identifier: "owner/repo"}},
		{name: "catalog name", args: []string{"langfuse"}, want: installOptions{Identifier: "langfuse"}},
		{name: "ref as a separate word", args: []string{"owner/repo", "--ref", sha}, want: installOptions{Identifier: "owner/repo", Ref: sha}},
		{name: "ref with =", args: []string{"--ref=" + sha, "owner/repo"}, want: installOptions{Identifier: "owner/repo", Ref: sha}},
		// Checked when installing, with the message the installer gives.
		{name: "short ref parses", args: []string{"owner/repo", "--ref", "abc123"}, want: installOptions{Identifier: "owner/repo", Ref: "abc123"}},
		{name: "ref without a value", args: []string{"owner/repo", "--ref"}, wantErr: "flag needs an argument: --ref"},
		{name: "force", args: []string{"owner/repo", "--force"}, want: installOptions{Identifier: "owner/repo", Force: true}},
		{name: "force short", args: []string{"-f", "owner/repo"}, want: installOptions{Identifier: "owner/repo", Force: true}},
		{name: "replace", args: []string{"owner/repo", "--replace"}, want: installOptions{Identifier: "owner/repo", Replace: true}},
		{name: "enable", args: []string{"owner/repo", "--enable"}, want: installOptions{Identifier: "owner/repo", Setup: setupOptions{Enable: true}}},
		{name: "no-enable", args: []string{"owner/repo", "--no-enable"}, want: installOptions{Identifier: "owner/repo", Setup: setupOptions{NoEnable: true}}},
		{name: "enable and no-enable", args: []string{"owner/repo", "--enable", "--no-enable"}, wantErr: errExclusive},
		{
			name: "every setup flag",
			args: []string{"https://example.com/p.git#sub", "--enable", "--skip-env", "--no-grant"},
			want: installOptions{Identifier: "https://example.com/p.git#sub", Setup: setupOptions{Enable: true, SkipEnv: true, NoGrant: true}},
		},
		{name: "allow-removed", args: []string{"gone", "--allow-removed"}, want: installOptions{Identifier: "gone", AllowRemoved: true}},
		{name: "no identifier", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two identifiers", args: []string{"a/b", "c/d"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"a/b", "--yes"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsUpdate(t *testing.T) {
	checkParses(t, newCmdPluginsUpdate, []parseCase[updateOptions]{
		{name: "name", args: []string{"calc"}, want: updateOptions{Name: "calc"}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "a flag of install", args: []string{"calc", "--ref", "abc"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsRemove(t *testing.T) {
	checkParses(t, newCmdPluginsRemove, []parseCase[removeOptions]{
		{name: "name", args: []string{"calc"}, want: removeOptions{Name: "calc"}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"calc", "--force"}, wantErr: errUnknownFlag},
	})
	if cmd := newCmdPluginsRemove(testFactory(), nil); !cmd.HasAlias("rm") || !cmd.HasAlias("uninstall") {
		t.Fatalf("aliases %v", cmd.Aliases)
	}
}

func TestNewCmdPluginsCapabilities(t *testing.T) {
	checkParses(t, newCmdPluginsCapabilities, []parseCase[capabilitiesOptions]{
		{name: "every plugin"},
		{name: "one plugin", args: []string{"calc"}, want: capabilitiesOptions{Name: "calc"}},
		{name: "json", args: []string{"--json"}, want: capabilitiesOptions{JSON: true}},
		{name: "one plugin, json", args: []string{"calc", "--json"}, want: capabilitiesOptions{Name: "calc", JSON: true}},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts at most 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"--yes"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsRepairMetadata(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no arguments"},
		{name: "an argument", args: []string{"calc"}, wantErr: `unknown command "calc" for "repair-metadata"`},
		{name: "unknown flag", args: []string{"--force"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdPluginsRepairMetadata, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
		})
	}
}

// TestExclusiveFlagsAreUsageErrors runs whole command lines: under the root,
// cobra's refusal of flags used together is a usage error (exit 2), reported
// before the verb touches HERMES_HOME.
func TestExclusiveFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"plugins", "install", "owner/repo", "--enable", "--no-enable"},
		{"plugins", "enable", "calc", "--allow-tool-override", "--no-allow-tool-override"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			hh := filepath.Join(t.TempDir(), ".hermes")
			var out, errOut bytes.Buffer
			f := &app.Factory{
				IO:  &app.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut},
				Env: func(k string) string { return map[string]string{"HERMES_HOME": hh}[k] },
			}
			if code := Run(context.Background(), f, args); code != app.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, app.ExitUsage, errOut.String())
			}
			if !strings.HasPrefix(errOut.String(), "Error: if any flags in the group [") || !strings.Contains(errOut.String(), errExclusive) {
				t.Fatalf("stderr:\n%s", errOut.String())
			}
			if out.Len() != 0 {
				t.Fatalf("stdout:\n%s", out.String())
			}
		})
	}
}
