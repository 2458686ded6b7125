package catalog

import (
	"fmt"
	"strings"
	"testing"
)

func TestSearchRanking(t *testing.T) {
	entries := []Entry{
		{Name: "author-hit", Author: "Telegram Fans", Origin: OriginIndex},
		{Name: "desc-hit", Description: "Bridges to TELEGRAM groups", Origin: OriginIndex},
		{Name: "tag-sub", Tags: []string{"telegram-bots"}, Origin: OriginIndex},
		{Name: "tag-exact", Tags: []string{"Telegram"}, Origin: OriginIndex},
		{Name: "my-telegram", Origin: OriginIndex},
		{Name: "telegram", Origin: OriginIndex},
		{Name: "telegran", Origin: OriginIndex}, // close spelling
		{Name: "unrelated", Description: "nothing", Origin: OriginIndex},
		{Name: "tool-hit", Tools: []string{"telegram"}, Tier: "community", Origin: OriginCatalog},
	}
	got := Search(entries, "Telegram", "")
	var names []string
	for _, r := range got {
		names = append(names, fmt.Sprintf("%s:%.0f", r.Entry.Name, r.Score))
	}
	// Close spelling scores ratio×60 = 0.875×60 = 52.5: it ranks by score, above a
	// description match, as upstream sorts by (-score, name).
	want := "telegram:100 my-telegram:80 tag-exact:70 tool-hit:70 tag-sub:55 telegran:52 desc-hit:50 author-hit:40"
	if strings.Join(names, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(names, " "), want)
	}
}

func TestSearchEmptyAndCapability(t *testing.T) {
	entries := []Entry{
		{Name: "b", Labels: []string{"platform"}, Origin: OriginIndex},
		{Name: "a", Labels: []string{"tools"}, Origin: OriginIndex},
		{Name: "c", Tools: []string{"x"}, Origin: OriginCatalog},
	}
	var names []string
	for _, r := range Search(entries, "", "") {
		names = append(names, r.Entry.Name)
	}
	if strings.Join(names, "") != "abc" {
		t.Fatalf("an empty term lists everything by name, got %v", names)
	}
	r := Search(entries, "", "TOOLS")
	if len(r) != 2 {
		t.Fatalf("capability tools: %d results", len(r))
	}
	if r := Search(entries, "", "platform"); len(r) != 1 || r[0].Entry.Name != "b" {
		t.Fatalf("capability platform: %+v", r)
	}
}

func TestSimilarity(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		min  float64
		max  float64
	}{
		{"telegram", "telegram", 1, 1},
		{"telegram", "telegran", 0.87, 0.88},
		{"abc", "xyz", 0, 0},
		{"a", "abcdefghijk", 0, 0}, // pruned by length
	} {
		got := similarity(tc.a, tc.b)
		if got < tc.min || got > tc.max {
			t.Errorf("similarity(%q,%q)=%v", tc.a, tc.b, got)
		}
	}
}

func BenchmarkSearch10k(b *testing.B) {
	entries := make([]Entry, 10000)
	for i := range entries {
		entries[i] = Entry{Name: fmt.Sprintf("plugin-%d-media", i), Description: "A Plugin For Hermes That Does Things With Media", Author: "Someone", Tags: []string{"media", "tools", "Desktop"}, Origin: OriginIndex}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Search(entries, "telegrm", "")
	}
}

func TestSourceOf(t *testing.T) {
	c := NewCatalog([]Entry{
		{Name: "cur", Origin: OriginCatalog},
		{Name: "idx", Origin: OriginIndex},
	}, nil)
	c.CatalogSource, c.IndexSource = SourceSeed, SourceRemote
	all := c.Search("", "")
	var cur, idx []Result
	for _, r := range all {
		if r.Entry.Origin == OriginIndex {
			idx = append(idx, r)
		} else {
			cur = append(cur, r)
		}
	}
	for _, tt := range []struct {
		name    string
		results []Result
		want    string
	}{
		{"index results", idx, SourceRemote},
		{"catalog results", cur, SourceSeed},
		{"both", all, SourceSeed},
		{"none", nil, SourceSeed},
	} {
		if got := c.SourceOf(tt.results); got != tt.want {
			t.Errorf("%s: SourceOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
