package cli

import "testing"

func TestNewCmdPluginsSearch(t *testing.T) {
	checkParses(t, newCmdPluginsSearch, []parseCase[searchOptions]{
		{name: "everything"},
		{name: "a term", args: []string{"memory"}, want: searchOptions{Term: "memory"}},
		{name: "capability", args: []string{"--capability", "tools"}, want: searchOptions{Capability: "tools"}},
		{name: "capability with =", args: []string{"x", "--capability=platform"}, want: searchOptions{Term: "x", Capability: "platform"}},
		{name: "capability without a value", args: []string{"--capability"}, wantErr: "flag needs an argument: --capability"},
		{name: "json and refresh", args: []string{"--json", "--refresh", "x"}, want: searchOptions{Term: "x", JSON: true, Refresh: true}},
		{name: "two terms", args: []string{"a", "b"}, wantErr: "accepts at most 1 arg(s), received 2"},
		{name: "unknown flag", args: []string{"--limit", "3"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsBrowse(t *testing.T) {
	checkParses(t, newCmdPluginsBrowse, []parseCase[searchOptions]{
		{name: "everything"},
		{name: "capability json", args: []string{"--capability", "hooks", "--json"}, want: searchOptions{Capability: "hooks", JSON: true}},
		{name: "refresh", args: []string{"--refresh"}, want: searchOptions{Refresh: true}},
		{name: "a term", args: []string{"memory"}, wantErr: `unknown command "memory" for "browse"`},
		{name: "unknown flag", args: []string{"--plain"}, wantErr: errUnknownFlag},
	})
}

func TestNewCmdPluginsInfo(t *testing.T) {
	checkParses(t, newCmdPluginsInfo, []parseCase[infoOptions]{
		{name: "name", args: []string{"langfuse"}, want: infoOptions{Name: "langfuse"}},
		{name: "json and refresh", args: []string{"langfuse", "--json", "--refresh"}, want: infoOptions{Name: "langfuse", JSON: true, Refresh: true}},
		{name: "no name", wantErr: "accepts 1 arg(s), received 0"},
		{name: "two names", args: []string{"a", "b"}, wantErr: "accepts 1 arg(s), received 2"},
		// A search flag, not one of info's.
		{name: "capability", args: []string{"langfuse", "--capability", "tools"}, wantErr: errUnknownFlag},
	})
}
