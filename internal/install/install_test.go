package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallPinnedNonTipCommit(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("pinned-plugin"))
	tip := repo.Commit(map[string]string{"extra.py": "x = 1\n"}, "second")
	in, _ := newInstaller(t, testEnv(t, nil))
	res, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: strings.ToUpper(first)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "pinned-plugin" || res.Revision != first || !res.Pinned {
		t.Fatalf("result %+v", res)
	}
	head := gitT(t, res.Dir, "rev-parse", "HEAD")
	if head != first || head == tip {
		t.Fatalf("HEAD %s, want %s", head, first)
	}
	if exists(filepath.Join(res.Dir, "extra.py")) {
		t.Fatal("file of a later commit is present")
	}
	row := readMeta(t, in).Rows["pinned-plugin"]
	if !row.Pinned || row.Revision != first || row.Source != repo.URL() {
		t.Fatalf("row %+v", row)
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,pinned-plugin" {
		t.Fatalf("plugins dir: %v", got)
	}
	data, _ := os.ReadFile(in.metaPath())
	if !strings.HasSuffix(string(data), "}\n") || !strings.Contains(string(data), "\n  \"pinned-plugin\": {\n    \"pinned\": true,") {
		t.Fatalf("metadata format:\n%s", data)
	}
}

func TestInstallDefaultBranchThenUpdate(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("tracker", "config.toml.example", "a = 1\n"))
	in, _ := newInstaller(t, testEnv(t, nil))
	res, err := in.Install(bg, Request{Identifier: repo.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pinned || res.Revision != first {
		t.Fatalf("result %+v", res)
	}
	if strings.Join(res.Created, ",") != "config.toml" {
		t.Fatalf("created %v", res.Created)
	}
	// Local edits: a tracked change, an untracked file.
	if err := os.WriteFile(filepath.Join(res.Dir, "__init__.py"), []byte("def register(ctx):\n    pass  # mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res.Dir, "notes.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := repo.Commit(map[string]string{"new.py": "y = 2\n"}, "second")
	up, err := in.Update(bg, UpdateRequest{Name: "tracker"})
	if err != nil {
		t.Fatal(err)
	}
	if up.Before != first || up.After != second || up.UpToDate {
		t.Fatalf("update %+v", up)
	}
	if !strings.Contains(strings.Join(up.Notes, "\n"), "re-applied on top of the update") {
		t.Fatalf("notes %v", up.Notes)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "__init__.py"))
	if !strings.Contains(string(b), "# mine") || !exists(filepath.Join(res.Dir, "notes.txt")) || !exists(filepath.Join(res.Dir, "new.py")) {
		t.Fatal("local edits or update lost")
	}
	if got := readMeta(t, in).Rows["tracker"].Revision; got != second {
		t.Fatalf("metadata revision %s", got)
	}
	up, err = in.Update(bg, UpdateRequest{Name: "tracker"})
	if err != nil || !up.UpToDate {
		t.Fatalf("second update: %+v %v", up, err)
	}
}

func TestUpdateConflictKeepsStash(t *testing.T) {
	repo, _ := newRepo(t, pluginFiles("conflicted"))
	in, _ := newInstaller(t, testEnv(t, nil))
	res, err := in.Install(bg, Request{Identifier: repo.URL()})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(res.Dir, "__init__.py"), []byte("mine\n"), 0o644)
	repo.Commit(map[string]string{"__init__.py": "theirs\n"}, "upstream change")
	up, err := in.Update(bg, UpdateRequest{Name: "conflicted"})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(up.Notes, "\n")
	if !strings.Contains(notes, "NOT re-applied") || !strings.Contains(notes, "git stash pop") {
		t.Fatalf("notes %q", notes)
	}
	list := gitT(t, res.Dir, "stash", "list")
	if !strings.Contains(list, AutostashMessage) {
		t.Fatalf("stash list %q", list)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "__init__.py"))
	if string(b) != "theirs\n" {
		t.Fatalf("work tree %q", b)
	}
}

func TestUpdateRefusesPinnedAndUnknown(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("pinme"))
	in, _ := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: first}); err != nil {
		t.Fatal(err)
	}
	_, err := in.Update(bg, UpdateRequest{Name: "pinme"})
	if err == nil || !strings.Contains(err.Error(), "is pinned to "+first) || !strings.Contains(err.Error(), "--force --ref") {
		t.Fatalf("err = %v", err)
	}
	_, err = in.Update(bg, UpdateRequest{Name: "nope"})
	var ni *NotInstalledError
	if !errors.As(err, &ni) || !strings.Contains(err.Error(), "Installed plugins: pinme") {
		t.Fatalf("err = %v", err)
	}
}

func TestReinstallKeepsPinAndForce(t *testing.T) {
	repo, first := newRepo(t, pluginFiles("keeper"))
	second := repo.Commit(map[string]string{"b.py": "b\n"}, "second")
	in, log := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{Identifier: repo.URL(), Ref: first}); err != nil {
		t.Fatal(err)
	}
	_, err := in.Install(bg, Request{Identifier: repo.URL()})
	if err == nil || !strings.Contains(err.Error(), "Plugin 'keeper' already exists. Use force reinstall") {
		t.Fatalf("err = %v", err)
	}
	res, err := in.Install(bg, Request{Identifier: repo.URL(), Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != first || !res.Replaced || !strings.Contains(log.String(), "Keeping the existing pin") {
		t.Fatalf("pin not kept: %+v\n%s", res, log)
	}
	res, err = in.Install(bg, Request{Identifier: repo.URL(), Force: true, Ref: second})
	if err != nil || res.Revision != second {
		t.Fatalf("moving the pin: %+v %v", res, err)
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,keeper" {
		t.Fatalf("plugins dir: %v", got)
	}
}

func TestInstallSubdir(t *testing.T) {
	files := map[string]string{"README.md": "monorepo\n"}
	for k, v := range pluginFiles("relay") {
		files["plugins/relay/"+k] = v
	}
	files["plugins/relay/link.py"] = "symlink:__init__.py"
	repo, sha := newRepo(t, files)
	in, _ := newInstaller(t, testEnv(t, nil))
	res, err := in.Install(bg, Request{Identifier: repo.URL() + "#plugins/relay", Ref: sha})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "relay" || exists(filepath.Join(res.Dir, ".git")) || !exists(filepath.Join(res.Dir, "plugin.yaml")) {
		t.Fatalf("subdir install: %+v", res)
	}
	if got := readMeta(t, in).Rows["relay"].Source; got != repo.URL()+"#plugins/relay" {
		t.Fatalf("source %q", got)
	}
	// The same through Request.URL/Subdir, as the catalog and packs call it.
	res, err = in.Install(bg, Request{URL: repo.URL(), Subdir: "plugins/relay", Ref: sha, Force: true})
	if err != nil || !res.Replaced {
		t.Fatalf("URL+Subdir request: %+v %v", res, err)
	}
}

func TestInstallBadInputLeavesNothing(t *testing.T) {
	good, goodSHA := newRepo(t, pluginFiles("good"))
	noManifest, _ := newRepo(t, map[string]string{"README.md": "hi\n"})
	unsafe, _ := newRepo(t, map[string]string{"plugin.yaml": "name: ../evil\n"})
	dotName, _ := newRepo(t, map[string]string{"plugin.yaml": "name: .hidden\n"})
	mv3, _ := newRepo(t, map[string]string{"plugin.yaml": "name: future\nmanifest_version: 3\n"})
	mvBad, _ := newRepo(t, map[string]string{"plugin.yaml": "name: future\nmanifest_version: two\n"})
	escapeLink, _ := newRepo(t, map[string]string{"README.md": "x\n", "sub": "symlink:/", "dangling": "symlink:../../nowhere"})
	innerLink, _ := newRepo(t, pluginFiles("linky", "secrets", "symlink:/etc/passwd"))
	relLink, _ := newRepo(t, pluginFiles("linky2", "up", "symlink:../outside"))

	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"tag ref", Request{Identifier: good.URL(), Ref: "v1.0.0"}, "--ref must be a full 40-character commit SHA."},
		{"branch ref", Request{Identifier: good.URL(), Ref: "main"}, "--ref must be a full 40-character commit SHA."},
		{"short sha", Request{Identifier: good.URL(), Ref: goodSHA[:12]}, "--ref must be a full 40-character commit SHA."},
		{"sha not in repo", Request{Identifier: good.URL(), Ref: strings.Repeat("ab", 20)}, "is not in " + good.URL()},
		{"missing repo", Request{Identifier: "file://" + filepath.Join(t.TempDir(), "nope.git")}, "Git clone failed for file://"},
		{"unreachable host", Request{Identifier: "http://127.0.0.1:1/o/r.git"}, "Git clone failed for http://127.0.0.1:1/o/r.git"},
		{"no plugin.yaml", Request{Identifier: noManifest.URL()}, "No plugin.yaml or plugin.json found in the repository"},
		{"unsafe name", Request{Identifier: unsafe.URL()}, `Unsafe plugin name "../evil"`},
		{"dot name", Request{Identifier: dotName.URL()}, `Unsafe plugin name ".hidden"`},
		{"manifest v3", Request{Identifier: mv3.URL()}, "requires manifest_version 3, but this installer only supports up to 2"},
		{"manifest version not int", Request{Identifier: mvBad.URL()}, "invalid manifest_version 'two' (expected an integer)"},
		{"subdir dotdot", Request{Identifier: good.URL() + "#../x"}, "escapes the repository"},
		{"subdir symlink escape", Request{Identifier: escapeLink.URL() + "#sub"}, "Subdirectory 'sub' escapes the repository"},
		{"subdir dangling symlink", Request{Identifier: escapeLink.URL() + "#dangling"}, "Subdirectory 'dangling' escapes the repository"},
		{"subdir missing", Request{Identifier: good.URL() + "#nope"}, "Subdirectory 'nope' does not exist"},
		{"absolute symlink inside", Request{Identifier: innerLink.URL()}, "Symlink 'secrets' -> '/etc/passwd' escapes the plugin directory"},
		{"relative symlink out", Request{Identifier: relLink.URL()}, "Symlink 'up' -> '../outside' escapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := newInstaller(t, testEnv(t, nil))
			_, err := in.Install(bg, tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %q", err, tt.want)
			}
			if got := dirListing(t, in.PluginsDir); len(got) != 0 {
				t.Fatalf("left behind: %v", got)
			}
		})
	}
}

func TestCollisionWithoutForceKeepsOld(t *testing.T) {
	a, _ := newRepo(t, pluginFiles("same", "a.txt", "a\n"))
	b, _ := newRepo(t, pluginFiles("same", "b.txt", "b\n"))
	in, _ := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{Identifier: a.URL()}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(in.metaPath())
	_, err := in.Install(bg, Request{Identifier: b.URL()})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(in.metaPath())
	if string(before) != string(after) || !exists(filepath.Join(in.PluginsDir, "same", "a.txt")) {
		t.Fatal("old plugin or metadata changed")
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,same" {
		t.Fatalf("plugins dir: %v", got)
	}
}

func TestRemove(t *testing.T) {
	repo, _ := newRepo(t, pluginFiles("gone"))
	in, _ := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{Identifier: repo.URL()}); err != nil {
		t.Fatal(err)
	}
	if err := in.Remove(bg, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, ok := readMeta(t, in).Rows["gone"]; ok {
		t.Fatal("row kept")
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json" {
		t.Fatalf("plugins dir: %v", got)
	}
	err := in.Remove(bg, "gone")
	if err == nil || !strings.Contains(err.Error(), "Plugin 'gone' not found in") {
		t.Fatalf("err = %v", err)
	}
	if err := in.Remove(bg, "../x"); err == nil {
		t.Fatal("unsafe name accepted")
	}
}

func TestCorruptMetadataReportedThenRepaired(t *testing.T) {
	pinned, first := newRepo(t, pluginFiles("p1"))
	floating, _ := newRepo(t, pluginFiles("p2"))
	other, _ := newRepo(t, pluginFiles("p3"))
	in, _ := newInstaller(t, testEnv(t, nil))
	if _, err := in.Install(bg, Request{Identifier: pinned.URL(), Ref: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(bg, Request{Identifier: floating.URL()}); err != nil {
		t.Fatal(err)
	}
	corrupt := []byte(`{"p1": {"pinned": true,` + "\n")
	os.WriteFile(in.metaPath(), corrupt, 0o600)
	for _, op := range []func() error{
		func() error { _, err := in.Install(bg, Request{Identifier: other.URL()}); return err },
		func() error { _, err := in.Update(bg, UpdateRequest{Name: "p2"}); return err },
		func() error { return in.Remove(bg, "p2") },
	} {
		err := op()
		var ce *CorruptMetadataError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "left it untouched") {
			t.Fatalf("err = %v", err)
		}
	}
	if b, _ := os.ReadFile(in.metaPath()); string(b) != string(corrupt) {
		t.Fatal("corrupt file was rewritten")
	}
	if got := dirListing(t, in.PluginsDir); strings.Join(got, ",") != ".install-metadata.json,p1,p2" {
		t.Fatalf("plugins dir: %v", got)
	}
	backup, names, skipped, err := in.RepairMetadata(bg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(backup); string(b) != string(corrupt) {
		t.Fatal("backup differs")
	}
	md := readMeta(t, in)
	if len(skipped) != 0 || strings.Join(names, ",") != "p1,p2" || !md.Rows["p1"].Pinned || md.Rows["p1"].Revision != first || md.Rows["p2"].Pinned || md.Rows["p2"].Source != floating.URL() {
		t.Fatalf("repaired %v %+v", names, md.Rows)
	}
}

func TestMetadataKeepsUnknownAndBadRows(t *testing.T) {
	repo, _ := newRepo(t, pluginFiles("fresh"))
	in, _ := newInstaller(t, testEnv(t, nil))
	os.MkdirAll(in.PluginsDir, 0o700)
	os.WriteFile(in.metaPath(), []byte(`{"odd": [1, 2], "cat": {"pinned": true, "revision": "r", "source": "s", "catalog": {"name": "cat", "tier": "official"}, "future_key": {"a": 1}}}`), 0o600)
	if _, err := in.Install(bg, Request{Identifier: repo.URL()}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(in.metaPath())
	for _, want := range []string{`"odd": [`, `"future_key": {`, `"tier": "official"`, `"fresh": {`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metadata lost %s:\n%s", want, b)
		}
	}
}

func TestScannerVerdicts(t *testing.T) {
	repo, _ := newRepo(t, pluginFiles("scanned"))
	verdict := VerdictDangerous
	var scannedDir string
	scanner := ScannerFunc(func(ctx context.Context, dir string, target ScanTarget) (*ScanReport, error) {
		if target.Name != "scanned" {
			t.Errorf("scan target %+v", target)
		}
		scannedDir = dir
		return &ScanReport{Verdict: verdict, Findings: 1, Blocking: []string{"CRITICAL reverse_shell __init__.py:3"}, Report: "Scan: scanned"}, nil
	})
	in, _ := newInstaller(t, testEnv(t, nil))
	in.Scanner = scanner
	_, err := in.Install(bg, Request{Identifier: repo.URL(), Force: true})
	if err == nil || !strings.Contains(err.Error(), "reverse_shell") || !strings.Contains(err.Error(), "plugins.scan_on_install: false") || !strings.Contains(err.Error(), "--force does not override") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(scannedDir, installPrefix) {
		t.Fatalf("scanned %s, not the staged tree", scannedDir)
	}
	if got := dirListing(t, in.PluginsDir); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
	verdict = VerdictCaution
	if _, err := in.Install(bg, Request{Identifier: repo.URL()}); err == nil || !strings.Contains(err.Error(), "Requires confirmation") {
		t.Fatalf("caution without confirmation: %v", err)
	}
	asked := false
	if _, err := in.Install(bg, Request{Identifier: repo.URL(), ConfirmCaution: func(*ScanReport) bool { asked = true; return true }}); err != nil || !asked {
		t.Fatalf("confirmed caution: %v asked=%v", err, asked)
	}
	verdict = VerdictDangerous
	if _, err := in.Install(bg, Request{Identifier: repo.URL(), Force: true, ScanDisabled: true}); err != nil {
		t.Fatalf("scan disabled: %v", err)
	}
}
