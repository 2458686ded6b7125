package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/hermes-go/hermes/internal/reaper"
)

// PythonInfo is what hermes knows about the configured interpreter.
type PythonInfo struct {
	Configured string   `json:"configured"` // as written in config / env ("python3")
	Executable string   `json:"executable"` // the real interpreter binary (sys.executable)
	Version    string   `json:"version"`
	Path       []string `json:"path"` // sys.path, for entry-point discovery
	// CacheTag is sys.implementation.cache_tag ("cpython-311"), which names the
	// interpreter's bytecode files; "" when it has none.
	CacheTag string `json:"cache_tag"`
	// SiteDirs are the directories whose .pth files extend sys.path (site-packages,
	// the user site), each with its modification time when probed (-1: absent).
	// Adding or removing a .pth file changes it, so the cached sys.path is stale.
	SiteDirs map[string]int64 `json:"site_dirs"`
}

// SitePackages returns the sys.path directories that can hold distributions.
func (pi PythonInfo) SitePackages() []string {
	var out []string
	for _, p := range pi.Path {
		if strings.HasSuffix(p, ".zip") {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// ChooseInterpreter applies upstream's order: plugins.python from config, else
// HERMES_PYTHON, else python3.
func ChooseInterpreter(configured string, env func(string) string) string {
	if configured != "" {
		return configured
	}
	if v := env("HERMES_PYTHON"); v != "" {
		return v
	}
	return "python3"
}

const probeScript = `import sys, json, site
sd = list(getattr(site, "getsitepackages", lambda: [])())
try:
    sd.append(site.getusersitepackages())
except Exception:
    pass
sd += [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and p not in sd]
print(json.dumps({"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3], "path": [p for p in sys.path if p],
 "cache_tag": getattr(sys.implementation, "cache_tag", None) or "", "site_dirs": sd}))`

// probeFormat names what probeScript reports; cached answers of an older format are
// probed again.
const probeFormat = "3"

// siteDirMTimes stats the site directories (-1 for one that does not exist).
func siteDirMTimes(dirs []string) map[string]int64 {
	out := make(map[string]int64, len(dirs))
	for _, d := range dirs {
		out[d] = -1
		if st, err := os.Stat(d); err == nil {
			out[d] = st.ModTime().UnixNano()
		}
	}
	return out
}

// sitesUnchanged reports whether no site directory changed since info was probed.
func sitesUnchanged(info PythonInfo) bool {
	for d, mtime := range info.SiteDirs {
		now := int64(-1)
		if st, err := os.Stat(d); err == nil {
			now = st.ModTime().UnixNano()
		}
		if now != mtime {
			return false
		}
	}
	return true
}

// ProbePython resolves the interpreter and asks it (once, then cached by the binary's
// identity and the state of its site directories) for its real executable and
// sys.path. Running the real executable rather than a launcher shim (pyenv's costs
// ~25 ms a start) keeps plugin start-up fast. The probe runs in a cell of r: the
// interpreter's site set-up (.pth files) is code like any plugin's.
func ProbePython(ctx context.Context, r *reaper.Reaper, configured string, env func(string) string, cacheDir, cwd string) (PythonInfo, error) {
	path, err := exec.LookPath(configured)
	if err != nil {
		return PythonInfo{}, fmt.Errorf("python interpreter %q not found: install Python 3 or set plugins.python in config.yaml (or HERMES_PYTHON) to an interpreter", configured)
	}
	abs, _ := filepath.Abs(path)
	st, err := os.Stat(abs)
	if err != nil {
		return PythonInfo{}, fmt.Errorf("python interpreter %q: %w", abs, err)
	}
	// A launcher shim (pyenv, asdf) picks the real interpreter per directory, so only
	// then does the working directory belong in the cache key.
	where := ""
	if strings.Contains(abs, "/shims/") {
		where = cwd
	}
	key := strings.Join([]string{probeFormat, configured, abs, strconv.FormatInt(st.ModTime().UnixNano(), 10),
		strconv.FormatInt(st.Size(), 10), env("PYENV_VERSION"), env("VIRTUAL_ENV"), where}, "\x00")
	cachePath := filepath.Join(cacheDir, "python-probe.json")
	cache := map[string]PythonInfo{}
	if b, err := os.ReadFile(cachePath); err == nil {
		_ = json.Unmarshal(b, &cache)
	}
	if info, ok := cache[key]; ok && sitesUnchanged(info) {
		if _, err := os.Stat(info.Executable); err == nil {
			return info, nil
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(pctx, abs, "-c", probeScript)
	cmd.Dir = cwd
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := r.Run(cmd); err != nil {
		detail := strings.TrimSpace(stderr.String())
		return PythonInfo{}, fmt.Errorf("python interpreter %s does not run (%v) %s: fix it or set plugins.python", abs, err, detail)
	}
	var answer struct {
		PythonInfo
		SiteDirs []string `json:"site_dirs"`
	}
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		return PythonInfo{}, fmt.Errorf("python interpreter %s gave an unexpected answer: %w", abs, err)
	}
	info := answer.PythonInfo
	// Stamped after the probe: a .pth file added in the few milliseconds between
	// the interpreter reading its site directories and this stat goes unnoticed
	// until the next change there.
	info.SiteDirs = siteDirMTimes(answer.SiteDirs)
	info.Configured = configured
	if info.Executable == "" {
		info.Executable = abs
	}
	if !versionAtLeast(info.Version, 3, 8) {
		return PythonInfo{}, fmt.Errorf("python interpreter %s is version %s; plugins need Python 3.8 or newer", abs, info.Version)
	}
	if len(cache) > 32 {
		cache = map[string]PythonInfo{}
	}
	cache[key] = info
	if b, err := json.Marshal(cache); err == nil {
		if os.MkdirAll(cacheDir, 0o700) == nil {
			_ = renameio.WriteFile(cachePath, b, 0o600)
		}
	}
	return info, nil
}

func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// PrecompileBridge writes the bytecode of the unpacked bridge in dir for this
// interpreter when the plugin environment forbids Python to write it itself
// (PYTHONDONTWRITEBYTECODE, common in containers): otherwise every plugin process
// compiles the bridge from source again, ~20 ms of CPU per plugin start. It runs one
// interpreter once per bridge version and interpreter (ever, not per hermes process),
// and reports whether it did.
// The bytecode lands in the bridge's own cache directory; the plugins' files are not
// touched. It runs in a cell of r.
func PrecompileBridge(ctx context.Context, r *reaper.Reaper, info PythonInfo, dir string, env []string) (bool, error) {
	if envValue(env, "PYTHONDONTWRITEBYTECODE") == "" || envValue(env, "PYTHONPYCACHEPREFIX") != "" || info.CacheTag == "" {
		return false, nil // Python writes (or keeps elsewhere) the bytecode itself
	}
	// One attempt per bridge version and interpreter: the marker is written first, so
	// a cache hermes cannot write to, or a file that does not compile, never costs an
	// interpreter start on every later plugin start.
	marker := filepath.Join(dir, "__pycache__", "hermes-precompiled."+info.CacheTag)
	if _, err := os.Stat(marker); err == nil {
		return false, nil
	}
	if os.MkdirAll(filepath.Dir(marker), 0o700) != nil || os.WriteFile(marker, nil, 0o600) != nil {
		return false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, info.Executable, "-c",
		"import compileall, sys; sys.exit(0 if compileall.compile_dir(sys.argv[1], quiet=2) else 1)", dir)
	cmd.Env = env
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := r.Run(cmd); err != nil {
		return false, fmt.Errorf("precompile python bridge with %s: %v %s", info.Executable, err, strings.TrimSpace(out.String()))
	}
	return true, nil
}

// envValue returns the last value of key in env ("KEY=value" entries).
func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}
