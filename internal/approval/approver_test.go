package approval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/tools"
)

type recordedHook struct {
	hook    string
	payload map[string]any
}

type hookRecorder struct {
	mu    sync.Mutex
	fired []recordedHook
}

func (h *hookRecorder) Fire(_ context.Context, hook hooks.Name, payload map[string]any) []any {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fired = append(h.fired, recordedHook{string(hook), payload})
	return nil
}

func req(cmd string) CommandRequest {
	v := Classify(cmd)
	return CommandRequest{Command: cmd, Findings: v.Dangerous, ToolCallID: "call_1", TurnID: "turn_1"}
}

func TestTTYApproverAnswers(t *testing.T) {
	cases := []struct {
		name    string
		answers string
		want    []Choice // choice for each of three identical requests
		prompts int      // how many times the human was asked
	}{
		{"default is deny", "\n\n\n", []Choice{"deny", "deny", "deny"}, 3},
		{"unknown word is deny", "maybe\nnope\nx\n", []Choice{"deny", "deny", "deny"}, 3},
		{"once asks every time", "o\nonce\ny\n", []Choice{"once", "once", "once"}, 3},
		{"session is remembered", "s\n", []Choice{"session", "session", "session"}, 1},
		{"end of input is deny", "", []Choice{"deny", "deny", "deny"}, 3},
		{"deny then session", "d\nsession\n", []Choice{"deny", "session", "session"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			hooks := &hookRecorder{}
			a := NewCLIApprover(strings.NewReader(c.answers), &out, nil, nil)
			a.SetHooks(hooks)
			a.SessionKey = "sess"
			for i, want := range c.want {
				got, err := a.ApproveCommand(context.Background(), req("rm -rf ./build"))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if got != want {
					t.Fatalf("request %d = %q, want %q; prompt output:\n%s", i, got, want, out.String())
				}
			}
			if n := strings.Count(out.String(), "DANGEROUS COMMAND: recursive delete"); n != c.prompts {
				t.Fatalf("prompted %d times, want %d:\n%s", n, c.prompts, out.String())
			}
			if !strings.Contains(out.String(), "[o]nce  |  [s]ession  |  [a]lways  |  [d]eny") || !strings.Contains(out.String(), "Choice [o/s/a/D]: ") {
				t.Fatalf("prompt text differs from upstream's:\n%s", out.String())
			}
			if len(hooks.fired) != 2*c.prompts {
				t.Fatalf("fired %d hooks, want pre+post per prompt (%d)", len(hooks.fired), 2*c.prompts)
			}
		})
	}
}

func TestApproverHookPayloads(t *testing.T) {
	hooks := &hookRecorder{}
	a := NewCLIApprover(strings.NewReader("o\n"), &bytes.Buffer{}, nil, nil)
	a.SetHooks(hooks)
	a.SessionKey = "sess-9"
	if got, _ := a.ApproveCommand(context.Background(), req("sudo rm -rf ./build")); got != "once" {
		t.Fatalf("choice = %q", got)
	}
	if len(hooks.fired) != 2 || hooks.fired[0].hook != "pre_approval_request" || hooks.fired[1].hook != "post_approval_response" {
		t.Fatalf("hooks = %+v", hooks.fired)
	}
	pre, post := hooks.fired[0].payload, hooks.fired[1].payload
	for _, f := range []string{"command", "description", "pattern_key", "pattern_keys", "session_key", "surface", "turn_id", "tool_call_id"} {
		if _, ok := pre[f]; !ok {
			t.Errorf("pre_approval_request lacks %q", f)
		}
		if _, ok := post[f]; !ok {
			t.Errorf("post_approval_response lacks %q", f)
		}
	}
	if _, ok := pre["choice"]; ok {
		t.Errorf("pre_approval_request has a choice")
	}
	if post["choice"] != "once" || post["surface"] != "cli" || post["session_key"] != "sess-9" || post["tool_call_id"] != "call_1" {
		t.Errorf("post payload = %v", post)
	}
	keys, _ := pre["pattern_keys"].([]any)
	if len(keys) < 2 || pre["pattern_key"] != keys[0] {
		t.Errorf("pattern_key %v / pattern_keys %v", pre["pattern_key"], keys)
	}
}

func TestApproverWithoutPrompterDenies(t *testing.T) {
	hooks := &hookRecorder{}
	a := &Approver{Hooks: hooks}
	got, err := a.ApproveCommand(context.Background(), req("rm -rf ./build"))
	if err != nil || got != "deny" {
		t.Fatalf("got %q, %v; want deny", got, err)
	}
	if len(hooks.fired) != 2 || hooks.fired[1].payload["choice"] != "deny" {
		t.Fatalf("hooks = %+v", hooks.fired)
	}
}

func TestApproverCancelledPrompt(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	hooks := &hookRecorder{}
	a := NewCLIApprover(pr, &bytes.Buffer{}, nil, nil)
	a.SetHooks(hooks)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, _ := a.ApproveCommand(ctx, req("rm -rf ./build"))
	if got != "deny" {
		t.Fatalf("got %q, want deny", got)
	}
	if c := hooks.fired[len(hooks.fired)-1].payload["choice"]; c != "cancelled" {
		t.Fatalf("post_approval_response choice = %v, want cancelled", c)
	}
}

func TestApproverPromptTimeout(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	hooks := &hookRecorder{}
	var out bytes.Buffer
	a := NewCLIApprover(pr, &out, nil, nil)
	a.SetHooks(hooks)
	a.Timeout = 50 * time.Millisecond
	got, err := a.ApproveCommand(context.Background(), req("rm -rf ./build"))
	if got != "deny" || err != nil {
		t.Fatalf("got %q, %v; want deny", got, err)
	}
	if c := hooks.fired[len(hooks.fired)-1].payload["choice"]; c != "timeout" {
		t.Fatalf("post_approval_response choice = %v, want timeout", c)
	}
	if !strings.Contains(out.String(), "Timeout - denying command") {
		t.Fatalf("no timeout notice:\n%s", out.String())
	}
}

func TestApproverAlwaysPersistsKeepingComments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	orig := "# my hermes config\n_config_version: 21\n\nmodel:\n  default: gpt-x  # the model I like\n\n# approvals I gave\ncommand_allowlist:\n  - make clean\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &config.Store{Path: path}
	a := NewCLIApprover(strings.NewReader("a\n"), &bytes.Buffer{}, store, nil)
	got, err := a.ApproveCommand(context.Background(), req("rm -rf ./build"))
	if err != nil || got != "always" {
		t.Fatalf("got %q, %v", got, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, keep := range []string{"# my hermes config", "default: gpt-x  # the model I like", "# approvals I gave", "  - make clean", "  - recursive delete"} {
		if !strings.Contains(s, keep) {
			t.Fatalf("config.yaml lost %q:\n%s", keep, s)
		}
	}
	// Asked again in the same run: remembered, no prompt needed (the reader is empty now).
	if got, _ := a.ApproveCommand(context.Background(), req("rm -rf ./dist")); got != "always" {
		t.Fatalf("second request = %q, want always", got)
	}
	// A new run reads the allowlist back: the guard lets the command through unasked.
	doc, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if d := NewGuardFromDoc(doc).Check("rm -rf ./build"); d.Action != Allow {
		t.Fatalf("after always, guard = %v %v", d.Action, d.PatternKeys())
	}
	if d := NewGuardFromStore(*store).Check("rm -rf ./build"); d.Action != Allow {
		t.Fatalf("lazy guard after always = %v %v", d.Action, d.PatternKeys())
	}
}

func TestGuardFromStoreReadsDenyRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("approvals:\n  deny:\n    - 'npm publish*'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := NewGuardFromStore(config.Store{Path: path})
	if d := g.Check("npm publish --access public"); d.Action != Block || d.DenyRule != "npm publish*" || !strings.Contains(d.Message, "approvals.deny") {
		t.Fatalf("decision = %+v", d)
	}
	bad := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(bad, []byte("approvals: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := NewGuardFromStore(config.Store{Path: bad}).Check("ls"); d.Action != Block {
		t.Fatalf("unreadable config must block, got %v", d.Action)
	}
}

func TestApproverPluginApproval(t *testing.T) {
	var out bytes.Buffer
	a := NewCLIApprover(strings.NewReader("s\n"), &out, nil, nil)
	var ap tools.Approver = a
	r := tools.ApprovalRequest{ToolName: "deploy", Args: map[string]any{"env": "prod"}, Message: "deploys to production", RuleKey: "deploy"}
	if got, _ := ap.Approve(context.Background(), r); got != "session" {
		t.Fatalf("got %q", got)
	}
	if got, _ := ap.Approve(context.Background(), r); got != "session" {
		t.Fatalf("second got %q (should be remembered)", got)
	}
	if !strings.Contains(out.String(), "deploys to production") || !strings.Contains(out.String(), `deploy {"env":"prod"}`) {
		t.Fatalf("prompt = %s", out.String())
	}
}

// lineSource is a LineReader: a prompt that times out leaves no read behind.
type lineSource struct{ lines chan string }

func (l *lineSource) Read([]byte) (int, error) {
	panic("a LineReader must not be read as a plain reader")
}

func (l *lineSource) ReadLineContext(ctx context.Context) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-l.lines:
		return s, nil
	}
}

func TestTTYPrompterUsesLineReader(t *testing.T) {
	src := &lineSource{lines: make(chan string, 1)}
	a := NewCLIApprover(src, &bytes.Buffer{}, nil, nil)
	a.Timeout = 20 * time.Millisecond
	if got, _ := a.ApproveCommand(context.Background(), req("rm -rf ./build")); got != "deny" {
		t.Fatalf("timed-out prompt = %q", got)
	}
	src.lines <- "s"
	a.Timeout = 0
	if got, _ := a.ApproveCommand(context.Background(), req("rm -rf ./build")); got != "session" {
		t.Fatalf("answer after a timed-out prompt = %q, want session (the line must not be lost)", got)
	}
}

// Through a real dispatcher, which (in tests) refuses a payload that differs from
// the catalog: both approval hooks fire as the catalog describes them, for a
// terminal command and for a plugin's approval directive.
func TestApproverHooksFitTheCatalog(t *testing.T) {
	d := hooks.New(hooks.Options{})
	var mu sync.Mutex
	var fired []string
	for _, h := range []hooks.Name{hooks.HookPreApprovalRequest, hooks.HookPostApprovalResponse} {
		d.Register(string(h), hooks.Callback{PluginID: "obs", Invoke: func(_ context.Context, p map[string]any) (any, error) {
			mu.Lock()
			fired = append(fired, fmt.Sprintf("%s:%v", h, p["choice"]))
			mu.Unlock()
			return nil, nil
		}})
	}
	a := NewCLIApprover(strings.NewReader("o\nd\n"), &bytes.Buffer{}, nil, nil)
	a.SetHooks(d)
	if got, err := a.ApproveCommand(context.Background(), req("rm -rf ./build")); err != nil || got != ChoiceOnce {
		t.Fatalf("command: %q, %v", got, err)
	}
	if got, err := a.Approve(context.Background(), tools.ApprovalRequest{ToolName: "deploy", RuleKey: "deploy"}); err != nil || got != ChoiceDeny {
		t.Fatalf("plugin approval: %q, %v", got, err)
	}
	want := "pre_approval_request:<nil> post_approval_response:once pre_approval_request:<nil> post_approval_response:deny"
	if got := strings.Join(fired, " "); got != want {
		t.Fatalf("fired %s\nwant  %s", got, want)
	}
}

// A request covering several pattern keys is approved as long as the shortest
// grant among them; a later shorter grant does not undo a longer one.
func TestApproverScopes(t *testing.T) {
	a := &Approver{}
	a.remember("k-session", ScopeSession)
	a.remember("k-always", ScopeAlways)
	a.remember("k-always", ScopeSession)
	tests := []struct {
		keys []string
		want Choice // "" = not approved, ask
	}{
		{[]string{"k-session"}, ChoiceSession},
		{[]string{"k-always"}, ChoiceAlways},
		{[]string{"k-always", "k-session"}, ChoiceSession},
		{[]string{"k-always", "unknown"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		got, ok := a.approved(tt.keys)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("approved(%v) = %q, %v; want %q", tt.keys, got, ok, tt.want)
		}
	}
}

// The prompt shows the command exactly as it would run, every line on its own
// line and escaped, says who asked, and offers "always" only when no plugin did.
func TestTTYPromptText(t *testing.T) {
	model := tools.Origin{}
	plugin := tools.Origin{Kind: tools.FromPlugin, Plugin: "evil\x1b[2K"}
	long := strings.Repeat("x", 700)
	cases := []struct {
		name        string
		cmd         string
		origin      tools.Origin
		want        []string // each a whole line of the prompt
		wantNot     []string // substrings that must not be there
		alwaysShown bool
	}{
		{"model, plain", "rm -rf build/old", model,
			[]string{"  ⚠️  DANGEROUS COMMAND: recursive delete", "      asked by the model; the command, exactly as it would run:", "      │ rm -rf build/old"},
			nil, true},
		{"erasing the warning", "rm -rf ~ #\r\x1b[2K\x1b[1A\x1b[2Kls", model,
			[]string{`      │ rm -rf ~ #\r\x1b[2K\x1b[1A\x1b[2Kls`}, []string{"\r", "\x1b"}, true},
		{"bidi reorders the command", "rm -rf /\u202e/pmt/", model,
			[]string{`      │ rm -rf /\u202e/pmt/`}, []string{"\u202e"}, true},
		{"several lines", "echo hi\nrm -rf build/x\n\techo done", model,
			[]string{"      │ echo hi", "      │ rm -rf build/x", `      │ \techo done`}, nil, true},
		{"never cut", "rm -rf build/" + long, model,
			[]string{"      │ rm -rf build/" + long, "      (end of the command) DANGEROUS COMMAND: recursive delete, asked by the model"}, nil, true},
		{"a plugin asked", "rm -rf build/old", plugin,
			[]string{"      asked by plugin `evil\\x1b[2K` through ctx.dispatch_tool; the command, exactly as it would run:",
				"      [o]nce  |  [s]ession  |  [d]eny"},
			[]string{"\x1b", "[a]lways"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			a := NewCLIApprover(strings.NewReader("d\n"), &out, nil, nil)
			r := req(c.cmd)
			r.Origin = c.origin
			if choice, err := a.ApproveCommand(context.Background(), r); err != nil || choice != ChoiceDeny {
				t.Fatalf("choice %q, %v; want deny", choice, err)
			}
			lines := strings.Split(out.String(), "\n")
			for _, w := range c.want {
				if !slicesContains(lines, w) {
					t.Errorf("no line %q in the prompt:\n%s", w, out.String())
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("the prompt contains %q:\n%q", w, out.String())
				}
			}
			if got := strings.Contains(out.String(), "[a]lways") && strings.Contains(out.String(), "Choice [o/s/a/D]: "); got != c.alwaysShown {
				t.Errorf("always offered: %v, want %v:\n%s", got, c.alwaysShown, out.String())
			}
		})
	}
}

func slicesContains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// A plugin's request never grants "always": typed anyway, it is "session", and
// nothing reaches command_allowlist; a prompter that answers "always" for it
// (a future transport) is held to the same.
func TestPluginRequestNeverAlways(t *testing.T) {
	plugin := tools.Origin{Kind: tools.FromPlugin, Plugin: "p"}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("model: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	a := NewCLIApprover(strings.NewReader("a\n"), &out, &config.Store{Path: path}, nil)
	r := req("rm -rf /tmp/x")
	r.Origin = plugin
	choice, err := a.ApproveCommand(context.Background(), r)
	if err != nil || choice != ChoiceSession {
		t.Fatalf("typed always for a plugin: %q, %v; want session", choice, err)
	}
	if !strings.Contains(out.String(), `"always" is not offered for a plugin's request: approved for this session only.`) {
		t.Errorf("no word of the downgrade:\n%s", out.String())
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), AllowlistKey) {
		t.Errorf("config.yaml got an allowlist entry from a plugin's request:\n%s", b)
	}

	always := &Approver{Prompter: answer(ChoiceAlways), Store: &config.Store{Path: path}}
	if c, _ := always.Approve(context.Background(), tools.ApprovalRequest{ToolName: "t", RuleKey: "k", Origin: plugin}); c != ChoiceSession {
		t.Errorf("a prompter's always for a plugin's request became %q, want session", c)
	}
	if c, _ := always.Approve(context.Background(), tools.ApprovalRequest{ToolName: "t", RuleKey: "k2"}); c != ChoiceAlways {
		t.Errorf("the model's request answered always became %q", c)
	}
}

type answer Choice

func (a answer) Prompt(context.Context, Prompt) (Choice, error) { return Choice(a), nil }

// The prompt shows the command and description through Redact: a token in the
// command never reaches the terminal, the rest does.
func TestTTYPrompterRedacts(t *testing.T) {
	secret := "gh" + "p_" + strings.Repeat("k3Y", 10)
	var out bytes.Buffer
	p := &TTYPrompter{Out: &out, ReadLine: func(context.Context) (string, error) { return "d", nil },
		Redact: func(s string) string { return strings.ReplaceAll(s, secret, "***") }}
	if _, err := p.Prompt(context.Background(), Prompt{Command: "curl -H 'x: " + secret + "' | sh", Description: "pipe " + secret}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), secret) {
		t.Fatalf("secret shown in the prompt:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "curl -H 'x: ***' | sh") || !strings.Contains(out.String(), "DANGEROUS COMMAND: pipe ***") {
		t.Fatalf("prompt lost its text:\n%s", out.String())
	}
}
