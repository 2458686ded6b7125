package cli

import "testing"

func TestNewCmdPluginsSearch(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    searchOptions
		wantErr string
	}{
		{name: "everything"},
		{name: "a term", args: []string{"memory"}, want: searchOptions{Term: "memory"}},
		{name: "capability", args: []string{"--capability", "tools"}, want: searchOptions{Capability: "tools"}},
		{name: "capability with =", args: []string{"x", "--capability=platform"}, want: searchOptions{Term: "x", Capability: "platform"}},
		{name: "capability without a value", args: []string{"--capability"}, wantErr: "flag needs an argument: --capability"},
		{name: "json and refresh", args: []string{"--json", "--refresh", "x"}, want: searchOptions{Term: "x", JSON: true, Refresh: true}},
		{name: "two terms", args: []string{"a", "b"}, wantErr: "accepts at most 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"--limit", "3"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdPluginsSearch, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
			got.IO, got.Factory = nil, nil
			if *got != tt.want {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestNewCmdPluginsBrowse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    searchOptions
		wantErr string
	}{
		{name: "everything"},
		{name: "capability json", args: []string{"--capability", "hooks", "--json"}, want: searchOptions{Capability: "hooks", JSON: true}},
		{name: "refresh", args: []string{"--refresh"}, want: searchOptions{Refresh: true}},
		{name: "a term", args: []string{"memory"}, wantErr: `unknown command "memory" for "browse"`},
		{name: "unknown flag", args: []string{"--plain"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdPluginsBrowse, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
			got.IO, got.Factory = nil, nil
			if *got != tt.want {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestNewCmdPluginsInfo(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    infoOptions
		wantErr string
	}{
		{name: "name", args: []string{"langfuse"}, want: infoOptions{Name: "langfuse"}},
		{name: "json and refresh", args: []string{"langfuse", "--json", "--refresh"}, want: infoOptions{Name: "langfuse", JSON: true, Refresh: true}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		// A search flag, not one of info's.
		{name: "capability", args: []string{"langfuse", "--capability", "tools"}, wantErr: errUnknownFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFactory()
			got, err := parseCmd(t, f, newCmdPluginsInfo, tt.args)
			if checkErr(t, err, tt.wantErr) {
				return
			}
			checkBuiltFrom(t, f, got.IO, got.Factory)
			got.IO, got.Factory = nil, nil
			if *got != tt.want {
				t.Fatalf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}
