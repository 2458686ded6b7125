package install

import (
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// privateServer serves the bare repository of r over git's smart-HTTP protocol
// (git http-backend behind net/http/cgi) on loopback, answering 401 unless the
// request carries basic auth with password token.
func privateServer(t *testing.T, r *testRepo, token string) (string, *atomic.Int64) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not found")
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(r.Bare), "GIT_HTTP_EXPORT_ALL=1"},
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		scheme, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		raw, _ := base64.StdEncoding.DecodeString(cred)
		_, pass, _ := strings.Cut(string(raw), ":")
		if !strings.EqualFold(scheme, "basic") || pass != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		n.Add(1)
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + url.PathEscape(filepath.Base(r.Bare)), &n
}

// noLeak fails if token appears in any file under dir or in any of the texts.
func noLeak(t *testing.T, token, dir string, texts ...string) {
	t.Helper()
	enc := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, s := range texts {
		if strings.Contains(s, token) || strings.Contains(s, enc) {
			t.Fatalf("token leaked in output: %q", s)
		}
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), token) || strings.Contains(string(b), enc) {
			t.Fatalf("token leaked into %s", p)
		}
		return nil
	})
}

func TestPrivateRepoGitHubTokenOnlyForGitHubHosts(t *testing.T) {
	const token = "ghp_testtoken1234567890"
	repo, sha := newRepo(t, pluginFiles("private-plugin"))
	url, hits := privateServer(t, repo, token)
	host := strings.TrimPrefix(strings.SplitN(url, "/", 4)[2], "")

	// Without credentials: refused with the private-repository hint, nothing left.
	in, _ := newInstaller(t, testEnv(t, map[string]string{"GITHUB_TOKEN": token}))
	_, err := in.Install(bg, Request{Identifier: url, Ref: sha})
	if err == nil || !strings.Contains(err.Error(), "may be private") {
		t.Fatalf("err = %v (a GitHub token must not be sent to %s)", err, host)
	}
	if hits.Load() != 0 || len(dirListing(t, in.PluginsDir)) != 0 {
		t.Fatalf("hits %d, left %v", hits.Load(), dirListing(t, in.PluginsDir))
	}

	for _, via := range []string{"env", "dotenv"} {
		t.Run(via, func(t *testing.T) {
			env := map[string]string{}
			if via == "env" {
				env["GH_TOKEN"] = token
			}
			in, log := newInstaller(t, testEnv(t, env))
			if via == "dotenv" {
				os.MkdirAll(filepath.Dir(in.Credentials.DotenvPath), 0o700)
				os.WriteFile(in.Credentials.DotenvPath, []byte("GITHUB_TOKEN="+token+"\n"), 0o600)
			}
			in.Credentials.GitHubHosts = []string{host}
			res, err := in.Install(bg, Request{Identifier: url, Ref: sha})
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := os.ReadFile(filepath.Join(res.Dir, ".git", "config"))
			if !strings.Contains(string(cfg), url) {
				t.Fatalf(".git/config lacks the origin:\n%s", cfg)
			}
			home := filepath.Dir(in.PluginsDir)
			os.Remove(in.Credentials.DotenvPath) // the .env is where the user keeps it
			noLeak(t, token, home, log.String())
		})
	}
}

func TestPrivateRepoStaleTokenThenGhThenCredentialHelper(t *testing.T) {
	const token = "s3cr3t-helper-token"
	repo, _ := newRepo(t, pluginFiles("helper-plugin"))
	url, _ := privateServer(t, repo, token)
	host := strings.SplitN(url, "/", 4)[2]

	// A stale GITHUB_TOKEN and a gh that knows the right token: gh wins.
	bin := t.TempDir()
	gh := filepath.Join(bin, "gh")
	os.WriteFile(gh, []byte("#!/bin/sh\n[ \"$1 $2\" = \"auth token\" ] && [ -z \"$GH_TOKEN$GITHUB_TOKEN\" ] && echo "+token+"\n"), 0o755)
	env := testEnv(t, map[string]string{"GITHUB_TOKEN": "stale-token", "PATH": bin + ":" + os.Getenv("PATH")})
	in, log := newInstaller(t, env)
	in.Credentials.GitHubHosts = []string{host}
	res, err := in.Install(bg, Request{Identifier: url})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	noLeak(t, token, filepath.Dir(in.PluginsDir), log.String())

	// Update of the private plugin authenticates the same way.
	repo.Commit(map[string]string{"more.py": "x\n"}, "more")
	up, err := in.Update(bg, UpdateRequest{Name: res.Name})
	if err != nil || up.UpToDate {
		t.Fatalf("update: %+v %v", up, err)
	}

	// Any host: a git credential helper configured in the user's ~/.gitconfig.
	userHome := t.TempDir()
	os.WriteFile(filepath.Join(userHome, ".gitconfig"), []byte("[credential]\n\thelper = \"!f() { echo username=someone; echo password="+token+"; }; f\"\n"), 0o600)
	in2, log2 := newInstaller(t, testEnv(t, map[string]string{"HOME": userHome}))
	res2, err := in2.Install(bg, Request{Identifier: url})
	if err != nil {
		t.Fatalf("%v\n%s", err, log2)
	}
	cfg, _ := os.ReadFile(filepath.Join(res2.Dir, ".git", "config"))
	if strings.Contains(string(cfg), "extraheader") || strings.Contains(string(cfg), "someone") {
		t.Fatalf(".git/config holds credentials:\n%s", cfg)
	}
	noLeak(t, token, filepath.Dir(in2.PluginsDir), log2.String())
}

func TestURLCredentialsAreScrubbed(t *testing.T) {
	const token = "url-embedded-token"
	repo, _ := newRepo(t, pluginFiles("urlcred"))
	url, _ := privateServer(t, repo, token)
	in, log := newInstaller(t, testEnv(t, nil))
	withCred := strings.Replace(url, "http://", "http://x-access-token:"+token+"@", 1)
	res, err := in.Install(bg, Request{Identifier: withCred})
	if err != nil {
		t.Fatal(err)
	}
	if got := readMeta(t, in).Rows[res.Name].Source; got != url {
		t.Fatalf("source %q", got)
	}
	noLeak(t, token, filepath.Dir(in.PluginsDir), log.String())

	// A wrong embedded token fails without echoing it.
	bad := strings.Replace(url, "http://", "http://x-access-token:wrong-token-value@", 1)
	_, err = in.Install(bg, Request{Identifier: bad, Force: true})
	if err == nil || strings.Contains(err.Error(), "wrong-token-value") {
		t.Fatalf("err = %v", err)
	}
}

func TestHeaderEnv(t *testing.T) {
	env := HeaderEnv("https://github.com:8443/o/r.git", Credential{Username: "x-access-token", Password: "tok"})
	want := []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.https://github.com:8443/.extraheader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:tok")),
	}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q", env)
	}
	if HeaderEnv("git@github.com:o/r.git", Credential{Password: "x"}) != nil {
		t.Fatal("ssh source got a header")
	}
}

func TestCredentialSourcesOrder(t *testing.T) {
	c := &Credentials{Env: func(k string) string { return map[string]string{"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}[k] }, GH: "/nonexistent/gh"}
	var names []string
	for _, l := range c.sources("https://github.com/o/r.git") {
		names = append(names, l.name)
	}
	if strings.Join(names, ",") != "GITHUB_TOKEN,GH_TOKEN,gh auth token,git credential fill" {
		t.Fatalf("github order %v", names)
	}
	names = nil
	for _, l := range c.sources("https://gitlab.example.com/o/r.git") {
		names = append(names, l.name)
	}
	if strings.Join(names, ",") != "git credential fill" {
		t.Fatalf("other host %v", names)
	}
	if len(c.sources("git@github.com:o/r.git")) != 0 {
		t.Fatal("ssh source got credential lookups")
	}
}

// TestCredentialHelperFromGitConfigGlobal: a helper in the file GIT_CONFIG_GLOBAL
// names (where git reads the user's global config instead of ~/.gitconfig) is
// used as one in ~/.gitconfig is. Before, hermes dropped the variable with the
// other GIT_* ones and git never saw that file.
func TestCredentialHelperFromGitConfigGlobal(t *testing.T) {
	const token = "global-config-helper-token"
	repo, _ := newRepo(t, pluginFiles("global-helper-plugin"))
	url, _ := privateServer(t, repo, token)
	global := filepath.Join(t.TempDir(), "my-gitconfig")
	os.WriteFile(global, []byte("[credential]\n\thelper = \"!f() { echo username=someone; echo password="+token+"; }; f\"\n"), 0o600)
	in, log := newInstaller(t, testEnv(t, map[string]string{"GIT_CONFIG_GLOBAL": global}))
	res, err := in.Install(bg, Request{Identifier: url})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	noLeak(t, token, filepath.Dir(in.PluginsDir), log.String())
	if cfg, _ := os.ReadFile(filepath.Join(res.Dir, ".git", "config")); strings.Contains(string(cfg), "someone") {
		t.Fatalf(".git/config holds credentials:\n%s", cfg)
	}
}
