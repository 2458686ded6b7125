package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitHardening: a user's global config that would run hooks or recurse into
// submodules, and inherited GIT_* variables pointing elsewhere, change nothing.
func TestGitHardening(t *testing.T) {
	sub, _ := newRepo(t, map[string]string{"inner.txt": "inner\n"})
	repo, _ := newRepo(t, pluginFiles("hardened"))
	gitT(t, repo.Work, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.Bare, "vendor")
	gitT(t, repo.Work, "commit", "-qm", "submodule")
	gitT(t, repo.Work, "push", "-q", "origin", "HEAD:main")
	sha := gitT(t, repo.Work, "rev-parse", "HEAD")

	userHome := t.TempDir()
	hooks := filepath.Join(userHome, "hooks")
	marker := filepath.Join(userHome, "hook-ran")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "post-merge", "reference-transaction"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	}
	os.WriteFile(filepath.Join(userHome, ".gitconfig"), []byte("[core]\n\thooksPath = "+hooks+"\n[submodule]\n\trecurse = true\n[fetch]\n\trecurseSubmodules = true\n[protocol \"file\"]\n\tallow = always\n"), 0o600)
	env := testEnv(t, map[string]string{"HOME": userHome, "GIT_DIR": "/nonexistent", "GIT_WORK_TREE": "/nonexistent", "GIT_CONFIG_PARAMETERS": "'core.hooksPath'='" + hooks + "'"})
	in, _ := newInstaller(t, env)
	for _, ref := range []string{"", sha} {
		res, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: ref, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if exists(marker) {
			t.Fatal("a hook ran")
		}
		if entries, _ := os.ReadDir(filepath.Join(res.Dir, "vendor")); len(entries) != 0 {
			t.Fatalf("submodule was checked out: %v", entries)
		}
	}
}

func TestUpdateRunsNoHooks(t *testing.T) {
	repo, _ := newRepo(t, pluginFiles("hooked"))
	userHome := t.TempDir()
	hooks := filepath.Join(userHome, "hooks")
	marker := filepath.Join(userHome, "hook-ran")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "post-merge", "reference-transaction"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	}
	os.WriteFile(filepath.Join(userHome, ".gitconfig"), []byte("[core]\n\thooksPath = "+hooks+"\n"), 0o600)
	in, _ := newInstaller(t, testEnv(t, map[string]string{"HOME": userHome}))
	if _, err := in.Install(bg, Request{Identifier: repo.URL()}); err != nil {
		t.Fatal(err)
	}
	repo.Commit(map[string]string{"more.py": "x\n"}, "more")
	if up, err := in.Update(bg, UpdateRequest{Name: "hooked"}); err != nil || up.UpToDate {
		t.Fatalf("update: %+v %v", up, err)
	}
	if exists(marker) {
		t.Fatal("a hook ran")
	}
}

func TestGitEnvironment(t *testing.T) {
	g := &Git{Env: func(k string) string {
		return map[string]string{"PATH": "/bin", "GIT_DIR": "/x", "GITHUB_TOKEN": "t", "SSH_AUTH_SOCK": "/agent"}[k]
	}}
	env := strings.Join(g.environ(nil), "\n")
	for _, want := range []string{"PATH=/bin", "SSH_AUTH_SOCK=/agent", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_SSH_COMMAND=ssh -o BatchMode=yes"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	for _, leak := range []string{"GIT_DIR", "GITHUB_TOKEN"} {
		if strings.Contains(env, leak) {
			t.Errorf("environment passes %s", leak)
		}
	}
}

// TestPinnedFetchFallsBackToFullFetch: a server speaking protocol v0 refuses a
// non-tip commit by id ("unadvertised object"); the install fetches everything and
// still checks out and verifies exactly that commit.
func TestPinnedFetchFallsBackToFullFetch(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("oldproto"))
	repo.Commit(map[string]string{"b.py": "b\n"}, "second")
	userHome := t.TempDir()
	os.WriteFile(filepath.Join(userHome, ".gitconfig"), []byte("[protocol]\n\tversion = 0\n"), 0o600)
	in, _ := newInstaller(t, testEnv(t, map[string]string{"HOME": userHome}))
	var calls []string
	in.Git.trace = func(args []string, err error) {
		if len(args) > 0 && args[0] == "fetch" {
			calls = append(calls, strings.Join(args, " ")+map[bool]string{true: " -> error", false: " -> ok"}[err != nil])
		}
	}
	res, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: first})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != first || gitT(t, res.Dir, "rev-parse", "HEAD") != first {
		t.Fatalf("revision %s", res.Revision)
	}
	if len(calls) != 2 || !strings.Contains(calls[0], "--depth 1") || !strings.HasSuffix(calls[0], "error") || !strings.HasSuffix(calls[1], "ok") {
		t.Fatalf("fetches: %q", calls)
	}
}

func TestMissingGitIsExplained(t *testing.T) {
	in, _ := newInstaller(t, testEnv(t, nil))
	in.Git.Path = filepath.Join(t.TempDir(), "no-git-here")
	_, err := in.Install(bg, Request{Identifier: "file:///nowhere.git"})
	if err == nil || !strings.Contains(err.Error(), "git is not installed or not on PATH") {
		t.Fatalf("err = %v", err)
	}
}
