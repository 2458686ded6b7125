package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinFileRefs(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	files := map[string]string{
		"proj/a.txt":           "one\ntwo\nthree\n",
		"proj/.env":            "KEY=1",
		"proj/conf/.env.local": "KEY=2",
		"proj/bin.dat":         "a\x00b",
		"outside.txt":          "secret",
	}
	for rel, text := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(cwd, "link.txt")); err != nil {
		t.Fatal(err)
	}
	r := refRoot{dir: cwd}
	tests := []struct {
		target, want, wantErr string
	}{
		{"a.txt", "```\none\ntwo\nthree\n```", ""},
		{"a.txt:2", "```\ntwo\n```", ""},
		{"a.txt:2-9", "```\ntwo\nthree\n```", ""},
		{filepath.Join(cwd, "a.txt") + ":1-1", "```\none\n```", ""},
		{"a.txt:3-2", "", "line range 3-2 is empty"},
		{"a.txt:9", "", "past its end"},
		{"../outside.txt", "", "outside the working directory"},
		{"link.txt", "", "outside the working directory"},
		{".env", "", "credentials file"},
		{"conf/.env.local", "", "credentials file"},
		{"bin.dat", "", "binary file"},
		{"conf", "", "is a directory: use @folder:conf"},
		{"nope.txt", "", "no such file or directory"},
	}
	for _, tt := range tests {
		got, ok, err := r.file(context.Background(), tt.target)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("@file:%s error = %v, want one saying %q", tt.target, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || !ok || got != tt.want):
			t.Errorf("@file:%s = %q, %v, %v; want %q", tt.target, got, ok, err, tt.want)
		}
	}
}

func TestFence(t *testing.T) {
	for in, want := range map[string]string{
		"x":            "```\nx\n```",
		"a\n```\nb\n":  "````\na\n```\nb\n````",
		"````` inside": "``````\n````` inside\n``````",
	} {
		if got := fence(in); got != want {
			t.Errorf("fence(%q) = %q, want %q", in, got, want)
		}
	}
}
