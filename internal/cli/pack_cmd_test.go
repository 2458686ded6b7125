package cli

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/pack"
)

func TestNewCmdPluginsPack(t *testing.T) {
	f := testFactory()
	cmd := newCmdPluginsPack(f)
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	if want := []string{"export", "install", "show"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("children %v, want %v", names, want)
	}
	var out bytes.Buffer
	cmd.SetArgs(nil)
	cmd.SetOut(&out)
	if _, err := cmd.ExecuteC(); err != nil || !strings.Contains(out.String(), "Usage:\n  pack [flags]\n  pack [command]") {
		t.Fatalf("no action: %v\n%s", err, out.String())
	}
	if err := execute(newCmdPluginsPack(f), []string{"frobnicate"}); err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate" for "pack"`) {
		t.Fatalf("unknown action: %v", err)
	}
}

func TestNewCmdPackShow(t *testing.T) {
	checkParses(t, newCmdPackShow, []parseCase[packShowOptions]{
		{name: "file", args: []string{"hermes-pack.yaml"}, want: packShowOptions{Source: "hermes-pack.yaml"}},
		{name: "https URL", args: []string{"https://example.com/p.yaml"}, want: packShowOptions{Source: "https://example.com/p.yaml"}},
		{name: "no source", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two sources", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "an install flag", args: []string{"p.yaml", "--force"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPackInstall(t *testing.T) {
	checkParses(t, newCmdPackInstall, []parseCase[packInstallOptions]{
		{name: "file", args: []string{"p.yaml"}, want: packInstallOptions{Source: "p.yaml"}},
		{name: "force", args: []string{"--force", "p.yaml"}, want: packInstallOptions{Source: "p.yaml", Force: true}},
		{name: "force short", args: []string{"p.yaml", "-f"}, want: packInstallOptions{Source: "p.yaml", Force: true}},
		// Confirming a pack needs a terminal: there is no --yes.
		{name: "yes", args: []string{"p.yaml", "--yes"}, wantErr: errUnknownFlag},
		{name: "no source", wantErr: "accepts 1 arg(s), received 0"},
	})
}

func TestNewCmdPackExport(t *testing.T) {
	checkParses(t, newCmdPackExport, []parseCase[packExportOptions]{
		{name: "defaults", want: packExportOptions{Name: pack.DefaultExportName}},
		{name: "name", args: []string{"--name", "my-setup"}, want: packExportOptions{Name: "my-setup"}},
		{name: "name with =", args: []string{"--name=my-setup", "--enabled-only"}, want: packExportOptions{Name: "my-setup", EnabledOnly: true}},
		{name: "name without a value", args: []string{"--name"}, wantErr: "flag needs an argument: --name"},
		{name: "a file argument", args: []string{"out.yaml"}, wantErr: `unknown command "out.yaml" for "export"`},
		{name: "unknown flag", args: []string{"--json"}, wantErr: errUnknownFlag},
	})
}
