package nixtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/cli"
)

// TestMain lets the test binary stand in for the hermes the module's
// activation runs (bin/hermes in the stub store links to it).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "hermes" {
		os.Exit(cli.Main())
	}
	os.Exit(m.Run())
}

// repo is the repository root (tests run in their package's directory).
var repo = filepath.Join("..", "..")

// requireNix skips without nix-instantiate on a developer's machine, and fails
// in CI, whose .ci/run installs Debian's nix-bin: a CI run that silently
// skipped every Nix check would prove nothing.
func requireNix(t *testing.T, tool string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed but CI=true: .ci/run must install Debian's nix-bin (apt-get install nix-bin)", tool)
	}
	t.Skipf("%s is not installed: apt-get install nix-bin to run the Nix checks (CI runs them)", tool)
	return ""
}

// nixCmd runs a Nix tool with a throwaway HOME, so it never writes to the
// user's ~/.cache/nix.
func nixCmd(t *testing.T, tool string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(requireNix(t, tool), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NIX_PATH=")
	return cmd
}

func TestNixFilesParse(t *testing.T) {
	files := []string{"flake.nix", "nix/module.nix", "nix/package.nix", "nix/tests/stub-lib.nix", "nix/tests/stub-pkgs.nix", "nix/tests/eval.nix"}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			out, err := nixCmd(t, "nix-instantiate", "--parse", filepath.Join(repo, f)).CombinedOutput()
			if err != nil {
				t.Fatalf("nix-instantiate --parse %s: %v\n%s", f, err, out)
			}
		})
	}
}

// evalResult is what nix/tests/eval.nix returns.
type evalResult struct {
	FailedAssertions []string          `json:"failedAssertions"`
	Service          *service          `json:"service"`
	Activation       *string           `json:"activation"`
	ActivationAfter  []string          `json:"activationAfter"`
	Users            map[string]any    `json:"users"`
	Settings         map[string]any    `json:"settings"`
	PackageName      string            `json:"packageName"`
	PackagePath      string            `json:"packagePath"`
	VendorHash       string            `json:"vendorHash"`
	FlakePackage     string            `json:"flakePackage"`
	Files            map[string]string `json:"files"`
}

type service struct {
	WantedBy      []string          `json:"wantedBy"`
	Environment   map[string]string `json:"environment"`
	Path          []any             `json:"path"`
	ServiceConfig map[string]any    `json:"serviceConfig"`
}

// evalModule evaluates the module (or the flake's module) with the given
// user modules, written in Nix, and returns the result or the evaluator's
// error output.
func evalModule(t *testing.T, storeDir string, viaFlake bool, modules ...string) (*evalResult, string, error) {
	t.Helper()
	evalNix, err := filepath.Abs(filepath.Join(repo, "nix", "tests", "eval.nix"))
	if err != nil {
		t.Fatal(err)
	}
	expr := "import " + evalNix + " { storeDir = " + nixString(storeDir) + "; viaFlake = " +
		map[bool]string{true: "true", false: "false"}[viaFlake] + "; modules = [ " + strings.Join(modules, " ") + " ]; }"
	cmd := nixCmd(t, "nix-instantiate", "--eval", "--strict", "--json", "-E", expr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, stderr.String(), err
	}
	var r evalResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("eval.nix output is not the expected JSON: %v\n%s", err, stdout.String())
	}
	return &r, stderr.String(), nil
}

// nixString quotes s as a Nix string literal.
func nixString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", `\${`)
	return `"` + r.Replace(s) + `"`
}

func TestModuleEvaluates(t *testing.T) {
	const on = `{ services.hermes-agent.enable = true; }`
	tests := []struct {
		name    string
		flake   bool
		modules []string
		check   func(t *testing.T, r *evalResult)
		wantErr string // the evaluation fails with this in its message
	}{
		{
			name:    "disabled: no service, no activation, no user",
			modules: []string{`{ services.hermes-agent.settings.model.default = "x"; }`},
			check: func(t *testing.T, r *evalResult) {
				if r.Service != nil || r.Activation != nil || len(r.Users) != 0 {
					t.Errorf("a disabled module configured something: service %v activation %v users %v", r.Service, r.Activation, r.Users)
				}
			},
		},
		{
			name:    "the unit runs hermes gateway run --replace as upstream's",
			modules: []string{on},
			check: func(t *testing.T, r *evalResult) {
				sc := r.Service.ServiceConfig
				want := map[string]any{
					"ExecStart": "/store/hermes-0.1.0/bin/hermes gateway run --replace", "User": "hermes", "Group": "hermes",
					"Restart": "always", "RestartSec": 5.0, "KillMode": "mixed", "KillSignal": "SIGTERM",
					"RestartPreventExitStatus": "78", "WorkingDirectory": "/var/lib/hermes/workspace",
					"ProtectSystem": "strict", "NoNewPrivileges": true, "UMask": "0007",
				}
				for k, v := range want {
					if sc[k] != v {
						t.Errorf("serviceConfig.%s = %v, want %v", k, sc[k], v)
					}
				}
				env := r.Service.Environment
				if env["HERMES_HOME"] != "/var/lib/hermes/.hermes" || env["HERMES_MANAGED"] != "true" || env["HOME"] != "/var/lib/hermes" {
					t.Errorf("service environment %v", env)
				}
				if env["HERMES_PYTHON"] != "/store/python3-3.12/bin/python3" {
					t.Errorf("HERMES_PYTHON %q, want the plain python312", env["HERMES_PYTHON"])
				}
				if len(r.Service.WantedBy) != 1 || r.Service.WantedBy[0] != "multi-user.target" {
					t.Errorf("wantedBy %v", r.Service.WantedBy)
				}
				if _, ok := r.Users["users"].(map[string]any)["hermes"]; !ok {
					t.Errorf("user hermes not created: %v", r.Users)
				}
				if len(r.ActivationAfter) != 1 || r.ActivationAfter[0] != "users" {
					t.Errorf("activation runs after %v, want [users] (it chowns to the service user)", r.ActivationAfter)
				}
				if len(r.FailedAssertions) != 0 {
					t.Errorf("assertions failed: %v", r.FailedAssertions)
				}
			},
		},
		{
			name: "settings merge deeply across modules, later keys winning",
			modules: []string{on,
				`{ services.hermes-agent.settings = { model.default = "a"; model.provider = "p"; toolsets = [ "all" ]; }; }`,
				`{ services.hermes-agent.settings = { model.default = "b"; platforms.telegram.enabled = true; }; }`},
			check: func(t *testing.T, r *evalResult) {
				got, _ := json.Marshal(r.Settings)
				want := `{"model":{"default":"b","provider":"p"},"platforms":{"telegram":{"enabled":true}},"toolsets":["all"]}`
				if string(got) != want {
					t.Errorf("settings %s, want %s", got, want)
				}
				if r.Files["hermes-settings.json"] != want {
					t.Errorf("settings file %s, want %s", r.Files["hermes-settings.json"], want)
				}
				if !strings.Contains(*r.Activation, "/bin/hermes config merge --from /store/hermes-settings.json") {
					t.Errorf("activation does not merge the settings file:\n%s", *r.Activation)
				}
			},
		},
		{
			name: "user, group, state dir, extra args, python packages, no user creation",
			modules: []string{on, `{ services.hermes-agent = {
				user = "bot"; group = "bots"; createUser = false; stateDir = "/srv/h";
				extraArgs = [ "--verbose" "it's" ];
				extraPythonPackages = [ { type = "derivation"; name = "python3.12-requests-2.32"; outPath = "/store/req"; } ];
			}; }`},
			check: func(t *testing.T, r *evalResult) {
				sc := r.Service.ServiceConfig
				if sc["User"] != "bot" || sc["Group"] != "bots" || sc["WorkingDirectory"] != "/srv/h/workspace" {
					t.Errorf("serviceConfig %v", sc)
				}
				if sc["ExecStart"] != `/store/hermes-0.1.0/bin/hermes gateway run --replace '--verbose' 'it'\''s'` {
					t.Errorf("ExecStart %q: extraArgs not appended, quoted", sc["ExecStart"])
				}
				if r.Service.Environment["HERMES_PYTHON"] != "/store/python3-3.12-env/bin/python3" {
					t.Errorf("HERMES_PYTHON %q, want the env with extraPythonPackages", r.Service.Environment["HERMES_PYTHON"])
				}
				if len(r.Users) != 0 {
					t.Errorf("createUser = false still made %v", r.Users)
				}
				if !strings.Contains(*r.Activation, "chown 'bot:bots'") {
					t.Errorf("activation does not give HERMES_HOME to bot:bots:\n%s", *r.Activation)
				}
			},
		},
		{
			name: "two plugins with one name fail an assertion",
			modules: []string{on, `{ services.hermes-agent.extraPlugins = [
				{ type = "derivation"; name = "source"; outPath = "/store/a-source"; }
				{ type = "derivation"; name = "source"; outPath = "/store/b-source"; } ]; }`},
			check: func(t *testing.T, r *evalResult) {
				if len(r.FailedAssertions) != 1 || !strings.Contains(r.FailedAssertions[0], "two plugins share a name (source source)") {
					t.Errorf("failed assertions %q", r.FailedAssertions)
				}
			},
		},
		{
			name:    "an environment value with a newline fails an assertion",
			modules: []string{on, `{ services.hermes-agent.environment.A = "one\ntwo"; }`},
			check: func(t *testing.T, r *evalResult) {
				if len(r.FailedAssertions) != 1 || !strings.Contains(r.FailedAssertions[0], "a value has a newline") {
					t.Errorf("failed assertions %q", r.FailedAssertions)
				}
			},
		},
		{
			name:    "the flake's module defaults package to the flake's build",
			flake:   true,
			modules: []string{on},
			check: func(t *testing.T, r *evalResult) {
				if r.PackageName != "hermes-0.1.0" || r.FlakePackage != "hermes-0.1.0" {
					t.Errorf("package %q, flake package %q", r.PackageName, r.FlakePackage)
				}
				want, err := os.ReadFile(filepath.Join(repo, "nix", "vendor-hash"))
				if err != nil {
					t.Fatal(err)
				}
				if r.VendorHash != strings.TrimSpace(string(want)) {
					t.Errorf("vendorHash %q, want nix/vendor-hash %q", r.VendorHash, want)
				}
			},
		},
		{
			name:    "a package option set by the user wins over the flake's default",
			flake:   true,
			modules: []string{on, `{ services.hermes-agent.package = { type = "derivation"; name = "hermes-custom"; outPath = "/opt/h"; }; }`},
			check: func(t *testing.T, r *evalResult) {
				if r.Service.ServiceConfig["ExecStart"] != "/opt/h/bin/hermes gateway run --replace" {
					t.Errorf("ExecStart %v", r.Service.ServiceConfig["ExecStart"])
				}
			},
		},
		{
			name:    "a wrong type is refused",
			modules: []string{on, `{ services.hermes-agent.extraPlugins = "/some/plugin"; }`},
			wantErr: "A definition for option `services.hermes-agent.extraPlugins' is not of type `list of package'",
		},
		{
			name:    "a misspelt option is refused",
			modules: []string{on, `{ services.hermes-agent.extraPlugin = [ ]; }`},
			wantErr: "The option `services.hermes-agent.extraPlugin' does not exist.",
		},
		{
			name:    "two different users are a conflict",
			modules: []string{on, `{ services.hermes-agent.user = "a"; }`, `{ services.hermes-agent.user = "b"; }`},
			wantErr: "The option `services.hermes-agent.user' has conflicting definition values",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, stderr, err := evalModule(t, "/store", tt.flake, tt.modules...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(stderr, tt.wantErr) {
					t.Fatalf("err %v, stderr:\n%s\nwant it to say %q", err, stderr, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("evaluation failed: %v\n%s", err, stderr)
			}
			tt.check(t, r)
		})
	}
}

func currentOwner(t *testing.T) (string, string) {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Fatal(err)
	}
	return u.Username, g.Name
}
