package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testEnv is the environment hermes' git sees in tests: the real PATH and a private HOME.
func testEnv(t *testing.T, extra map[string]string) func(string) string {
	t.Helper()
	m := map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// gitT runs a plain git command for test set-up (not through the hardened runner).
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// testRepo is a bare repository with a work tree to commit from.
type testRepo struct {
	t    *testing.T
	Bare string
	Work string
}

func (r *testRepo) URL() string { return "file://" + r.Bare }

func newRepo(t *testing.T, files map[string]string) (*testRepo, string) {
	t.Helper()
	root := t.TempDir()
	r := &testRepo{t: t, Bare: filepath.Join(root, "plugin repo.git"), Work: filepath.Join(root, "work")}
	gitT(t, root, "init", "--quiet", "--bare", "-b", "main", r.Bare)
	gitT(t, root, "init", "--quiet", "-b", "main", r.Work)
	gitT(t, r.Work, "remote", "add", "origin", r.Bare)
	sha := r.Commit(files, "first")
	return r, sha
}

// Commit writes files (an empty value deletes), commits and pushes; returns the SHA.
func (r *testRepo) Commit(files map[string]string, msg string) string {
	r.t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(r.Work, filepath.FromSlash(n))
		if files[n] == "" {
			_ = os.Remove(p)
			continue
		}
		if strings.HasPrefix(files[n], "symlink:") {
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(strings.TrimPrefix(files[n], "symlink:"), p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	gitT(r.t, r.Work, "add", "-A")
	gitT(r.t, r.Work, "commit", "--quiet", "--allow-empty", "-m", msg)
	gitT(r.t, r.Work, "push", "--quiet", "origin", "HEAD:main")
	return gitT(r.t, r.Work, "rev-parse", "HEAD")
}

func pluginFiles(name string, extra ...string) map[string]string {
	m := map[string]string{
		"plugin.yaml": "name: " + name + "\nversion: \"1.0\"\n",
		"__init__.py": "def register(ctx):\n    pass\n",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func newInstaller(t *testing.T, env func(string) string) (*Installer, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	home := t.TempDir()
	g := &Git{Env: env}
	return &Installer{
		PluginsDir:  filepath.Join(home, "plugins"),
		Git:         g,
		Credentials: &Credentials{Env: env, DotenvPath: filepath.Join(home, ".env"), Git: g},
		Log:         &log,
	}, &log
}

// dirListing lists the plugins directory, leaving out the lock file.
func dirListing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != lockFile {
			out = append(out, e.Name())
		}
	}
	return out
}

func readMeta(t *testing.T, in *Installer) *Metadata {
	t.Helper()
	md, err := ReadMetadata(in.metaPath())
	if err != nil {
		t.Fatal(err)
	}
	return md
}

var bg = context.Background()
