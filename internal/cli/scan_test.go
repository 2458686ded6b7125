package cli

import "testing"

func TestNewCmdPluginsScan(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    scanOptions
		wantErr string
	}{
		{name: "relative path", args: []string{"my-plugin"}, want: scanOptions{Path: "my-plugin"}},
		{name: "absolute path json", args: []string{"/tmp/p", "--json"}, want: scanOptions{Path: "/tmp/p", JSON: true}},
		{name: "explain", args: []string{"p", "--explain"}, want: scanOptions{Path: "p", Explain: true}},
		{name: "explain and json", args: []string{"p", "--explain", "--json"}, wantErr: "--explain and --json cannot be combined"},
		{name: "no path", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two paths", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"p", "--force"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdPluginsScan, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			if got.IO != f.IO || got.Cwd != f.Cwd || got.Python == nil {
				t.Fatalf("options not built from the factory: %+v", got)
			}
			got.IO, got.Cwd, got.Python = nil, "", nil
			if got.Path != tt.want.Path || got.JSON != tt.want.JSON || got.Explain != tt.want.Explain {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}
