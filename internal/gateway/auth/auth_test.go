package auth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

func dm(pl, user string) platform.Source {
	return platform.Source{Platform: pl, ChatID: user, ChatType: platform.ChatDM, UserID: user, UserName: "u" + user}
}

func group(pl, user string) platform.Source {
	return platform.Source{Platform: pl, ChatID: "-100", ChatType: platform.ChatGroup, UserID: user}
}

func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

type authSetup struct {
	env      map[string]string // the process environment
	dotenv   string            // $HERMES_HOME/.env
	config   string            // config.yaml
	paired   map[string]string // platform -> user id approved through the store
	platform map[string]PlatformEnv
}

func newTestAuthorizer(t *testing.T, s authSetup) (*Authorizer, string) {
	t.Helper()
	dir := t.TempDir()
	if s.dotenv != "" {
		if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(s.dotenv), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var cfg ConfigReader
	if s.config != "" {
		doc, err := config.Parse([]byte(s.config), "config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cfg = doc
	}
	a, err := New(context.Background(), Options{Home: dir, Env: mapEnv(s.env), Config: cfg, Platforms: s.platform})
	if err != nil {
		t.Fatal(err)
	}
	for pl, user := range s.paired {
		pairUser(t, a.Pairing(), pl, user)
	}
	return a, dir
}

// pairUser goes the whole way: a code requested, then approved.
func pairUser(t *testing.T, p *Pairing, pl, user string) {
	t.Helper()
	ctx := context.Background()
	code, err := p.Request(ctx, pl, user, "name of "+user)
	if err != nil {
		t.Fatalf("Request(%s, %s): %v", pl, user, err)
	}
	if _, err := p.Approve(ctx, pl, code); err != nil {
		t.Fatalf("Approve(%s, %s): %v", pl, code, err)
	}
}

func TestCheckOrder(t *testing.T) {
	tests := []struct {
		name  string
		setup authSetup
		src   platform.Source
		want  Rule
		pair  bool // a denial that offers a code
	}{
		{"nothing configured: deny, offer a code in a DM", authSetup{}, dm("telegram", "7"), RuleDenied, true},
		{"nothing configured: a group message is dropped", authSetup{}, group("telegram", "7"), RuleDenied, false},
		{"per-platform allow-all", authSetup{env: map[string]string{"TELEGRAM_ALLOW_ALL_USERS": "true"}}, dm("telegram", "7"), RulePlatformAllowAll, false},
		{"allow-all of another platform does not count", authSetup{env: map[string]string{"DISCORD_ALLOW_ALL_USERS": "yes"}}, dm("telegram", "7"), RuleDenied, true},
		{"allow-all false", authSetup{env: map[string]string{"TELEGRAM_ALLOW_ALL_USERS": "false"}}, dm("telegram", "7"), RuleDenied, true},
		{"allow-all wins over the allowlist", authSetup{env: map[string]string{"TELEGRAM_ALLOW_ALL_USERS": "1", "TELEGRAM_ALLOWED_USERS": "7"}}, dm("telegram", "7"), RulePlatformAllowAll, false},
		{"paired comes before the allowlist", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "7"}, paired: map[string]string{"telegram": "7"}}, dm("telegram", "7"), RulePaired, false},
		{"paired on another platform does not count", authSetup{paired: map[string]string{"discord": "7"}}, dm("telegram", "7"), RuleDenied, true},
		{"platform allowlist", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": " 1, 7 ,9"}}, dm("telegram", "7"), RulePlatformAllowlist, false},
		{"platform allowlist, other user: ignored (an allowlist means no codes)", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "1"}}, dm("telegram", "7"), RuleDenied, false},
		{"allowlist star", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "*"}}, group("telegram", "7"), RulePlatformAllowlist, false},
		{"no substring matches", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "77,17"}}, dm("telegram", "7"), RuleDenied, false},
		{"discord role granted by the adapter", authSetup{env: map[string]string{"DISCORD_ALLOWED_ROLES": "999"}},
			platform.Source{Platform: "discord", ChatType: platform.ChatDM, UserID: "5", RoleAuthorized: true}, RulePlatformRole, false},
		{"a role grant without DISCORD_ALLOWED_ROLES is not trusted", authSetup{},
			platform.Source{Platform: "discord", ChatType: platform.ChatDM, UserID: "5", RoleAuthorized: true}, RuleDenied, true},
		{"roles do not apply to telegram", authSetup{env: map[string]string{"DISCORD_ALLOWED_ROLES": "999"}},
			platform.Source{Platform: "telegram", ChatType: platform.ChatDM, UserID: "5", RoleAuthorized: true}, RuleDenied, true},
		{"gateway allowlist", authSetup{env: map[string]string{"GATEWAY_ALLOWED_USERS": "7"}}, group("discord", "7"), RuleGatewayAllowlist, false},
		{"gateway allow-all", authSetup{env: map[string]string{"GATEWAY_ALLOW_ALL_USERS": "TRUE"}}, dm("discord", "7"), RuleGatewayAllowAll, false},
		{"platform allowlist comes before gateway allow-all", authSetup{env: map[string]string{"GATEWAY_ALLOW_ALL_USERS": "true", "DISCORD_ALLOWED_USERS": "7"}}, dm("discord", "7"), RulePlatformAllowlist, false},
		{"no user id: deny, nothing to pair", authSetup{env: map[string]string{"GATEWAY_ALLOW_ALL_USERS": "true"}}, dm("telegram", ""), RuleDenied, false},
		{".env over the process environment", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "7"}, dotenv: "TELEGRAM_ALLOWED_USERS=8\n"}, dm("telegram", "7"), RuleDenied, false},
		{".env alone", authSetup{dotenv: "# owner\nTELEGRAM_ALLOWED_USERS=7 # me\n"}, dm("telegram", "7"), RulePlatformAllowlist, false},
		{"a plugin platform's own variable", authSetup{env: map[string]string{"HOOK_USERS": "7"}, platform: map[string]PlatformEnv{"webhookchat": {AllowedUsers: "HOOK_USERS"}}}, dm("webhookchat", "7"), RulePlatformAllowlist, false},
		{"a plugin platform's default variable", authSetup{env: map[string]string{"WEBHOOKCHAT_ALLOW_ALL_USERS": "true"}}, dm("webhookchat", "7"), RulePlatformAllowAll, false},
		{"a plugin platform's own allow-all", authSetup{env: map[string]string{"HOOK_OPEN": "true", "WEBHOOKCHAT_ALLOW_ALL_USERS": "false"}, platform: map[string]PlatformEnv{"webhookchat": {AllowAll: "HOOK_OPEN"}}}, dm("webhookchat", "7"), RulePlatformAllowAll, false},
		{"platform name case", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "7"}}, dm("Telegram", "7"), RulePlatformAllowlist, false},
		{"config ignore", authSetup{config: "unauthorized_dm_behavior: ignore\n"}, dm("telegram", "7"), RuleDenied, false},
		{"config pair with an allowlist", authSetup{config: "unauthorized_dm_behavior: pair\n", env: map[string]string{"TELEGRAM_ALLOWED_USERS": "1"}}, dm("telegram", "7"), RuleDenied, true},
		{"platform ignore over global pair", authSetup{config: "unauthorized_dm_behavior: pair\nplatforms:\n  telegram:\n    unauthorized_dm_behavior: ignore\n"}, dm("telegram", "7"), RuleDenied, false},
		{"platform extra pair over global ignore", authSetup{config: "unauthorized_dm_behavior: ignore\nplatforms:\n  telegram:\n    extra:\n      unauthorized_dm_behavior: pair\n"}, dm("telegram", "7"), RuleDenied, true},
		{"top-level platform block", authSetup{config: "discord:\n  unauthorized_dm_behavior: ignore\n"}, dm("discord", "7"), RuleDenied, false},
		{"another platform's setting does not apply", authSetup{config: "platforms:\n  discord:\n    unauthorized_dm_behavior: ignore\n"}, dm("telegram", "7"), RuleDenied, true},
		{"email ignores by default", authSetup{}, dm("email", "a@b"), RuleDenied, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newTestAuthorizer(t, tc.setup)
			d := a.Check(tc.src)
			if d.Rule != tc.want || d.Allowed != (tc.want != RuleDenied) || d.Pair != tc.pair || d.Problem != nil {
				t.Errorf("Check = %+v, want rule %s, pair %v", d, tc.want, tc.pair)
			}
		})
	}
}

// ctx.inject_message never rides on an adapter-time grant; the other rules hold.
func TestCheckInjected(t *testing.T) {
	a, _ := newTestAuthorizer(t, authSetup{env: map[string]string{"DISCORD_ALLOWED_ROLES": "999", "DISCORD_ALLOWED_USERS": "1"}})
	role := platform.Source{Platform: "discord", ChatType: platform.ChatDM, UserID: "5", RoleAuthorized: true}
	if d := a.Check(role); !d.Allowed {
		t.Fatalf("Check(role) = %+v, want allowed by role", d)
	}
	if d := a.CheckInjected(role); d.Allowed || d.Pair {
		t.Errorf("CheckInjected(role) = %+v, want denied without a pairing offer", d)
	}
	listed := platform.Source{Platform: "discord", ChatType: platform.ChatDM, UserID: "1", RoleAuthorized: true}
	if d := a.CheckInjected(listed); !d.Allowed || d.Rule != RulePlatformAllowlist {
		t.Errorf("CheckInjected(listed) = %+v, want allowed by the allowlist", d)
	}
}

// A change of .env (an approval, a revoke, an edit) applies to the next message.
func TestCheckRereadsDotenv(t *testing.T) {
	a, dir := newTestAuthorizer(t, authSetup{dotenv: "TELEGRAM_ALLOWED_USERS=1\n"})
	if d := a.Check(dm("telegram", "7")); d.Allowed {
		t.Fatalf("before: %+v", d)
	}
	if err := config.SetDotenv(context.Background(), filepath.Join(dir, ".env"), "TELEGRAM_ALLOWED_USERS", "1,7"); err != nil {
		t.Fatal(err)
	}
	if d := a.Check(dm("telegram", "7")); !d.Allowed {
		t.Errorf("after the edit: %+v, want allowed", d)
	}
}

func TestBadBehaviorConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"unauthorized_dm_behavior: silent\n", "unauthorized_dm_behavior is silent; use pair"},
		{"platforms:\n  telegram:\n    unauthorized_dm_behavior: 3\n", "platforms.telegram.unauthorized_dm_behavior is 3"},
		{"platforms:\n  discord:\n    extra:\n      unauthorized_dm_behavior: [pair]\n", "platforms.discord.extra.unauthorized_dm_behavior"},
	} {
		doc, err := config.Parse([]byte(tc.cfg), "config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(context.Background(), Options{Home: t.TempDir(), Config: doc})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestStartupWarning(t *testing.T) {
	tests := []struct {
		name  string
		setup authSetup
		warn  bool
	}{
		{"nothing", authSetup{}, true},
		{"an allowlist", authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "1"}}, false},
		{"an allowlist of a platform not served", authSetup{env: map[string]string{"SLACK_ALLOWED_USERS": "1"}}, true},
		{"gateway allowlist", authSetup{dotenv: "GATEWAY_ALLOWED_USERS=1\n"}, false},
		{"gateway allow-all", authSetup{env: map[string]string{"GATEWAY_ALLOW_ALL_USERS": "true"}}, false},
		{"platform allow-all", authSetup{env: map[string]string{"DISCORD_ALLOW_ALL_USERS": "true"}}, false},
		{"discord roles", authSetup{env: map[string]string{"DISCORD_ALLOWED_ROLES": "5"}}, false},
		{"somebody paired", authSetup{paired: map[string]string{"telegram": "1"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, dir := newTestAuthorizer(t, tc.setup)
			got := a.StartupWarning([]string{"telegram", "discord"})
			if (got != "") != tc.warn {
				t.Fatalf("StartupWarning = %q, want a warning: %v", got, tc.warn)
			}
			if tc.warn && (!strings.HasPrefix(got, "No user allowlists configured. All unauthorized users will be denied.") ||
				!strings.Contains(got, filepath.Join(dir, ".env"))) {
				t.Errorf("warning %q: want upstream's text naming %s", got, filepath.Join(dir, ".env"))
			}
		})
	}
}

func TestPairingReply(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	dir := t.TempDir()
	a, err := New(context.Background(), Options{Home: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := a.PairingReply(ctx, dm("telegram", "1"))
	if err != nil {
		t.Fatal(err)
	}
	code := strings.TrimSuffix(first[strings.LastIndex(first, " ")+1:], "`")
	if first != PairingCodeText("telegram", code) || len(code) != CodeLength {
		t.Fatalf("first reply %q: want the code text with an %d-letter code", first, CodeLength)
	}
	if again, err := a.PairingReply(ctx, dm("telegram", "1")); err != nil || again != "" {
		t.Errorf("second request within 10 minutes = %q, %v; want silence", again, err)
	}
	for _, u := range []string{"2", "3"} {
		if r, err := a.PairingReply(ctx, dm("telegram", u)); err != nil || !strings.Contains(r, "pairing code") {
			t.Fatalf("user %s: %q, %v", u, r, err)
		}
	}
	if r, err := a.PairingReply(ctx, dm("telegram", "4")); err != nil || r != TooManyRequestsText {
		t.Errorf("fourth pending = %q, %v; want %q", r, err, TooManyRequestsText)
	}
	if r, err := a.PairingReply(ctx, dm("telegram", "4")); err != nil || r != "" {
		t.Errorf("after too-many, the same user = %q, %v; want silence", r, err)
	}
	if d := a.Check(dm("telegram", "1")); d.Allowed {
		t.Errorf("a pending user is not yet allowed: %+v", d)
	}
	if _, err := a.Pairing().Approve(ctx, "telegram", strings.ToLower(code)); err != nil {
		t.Fatalf("approve (lower case, as typed): %v", err)
	}
	if d := a.Check(dm("telegram", "1")); !d.Allowed || d.Rule != RulePaired {
		t.Errorf("after approval: %+v, want paired", d)
	}
}

// A malformed approved list is reported with the decision, and left alone.
func TestCheckMalformedApproved(t *testing.T) {
	a, dir := newTestAuthorizer(t, authSetup{env: map[string]string{"TELEGRAM_ALLOWED_USERS": "7"}})
	path := filepath.Join(dir, "platforms", "pairing", "telegram-approved.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"1": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := a.Check(dm("telegram", "7"))
	if !d.Allowed || d.Problem == nil || !strings.Contains(d.Problem.Error(), path) {
		t.Errorf("Check = %+v, want allowed by the allowlist with a problem naming %s", d, path)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"1": {` {
		t.Errorf("the malformed file was changed: %q", got)
	}
}

// The runner checks from many goroutines while `hermes pairing` (here: another
// store on the same home) approves and revokes.
func TestCheckConcurrentWithApprovals(t *testing.T) {
	a, dir := newTestAuthorizer(t, authSetup{dotenv: "TELEGRAM_ALLOWED_USERS=1\n"})
	other, err := OpenPairing(context.Background(), PairingOptions{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if d := a.Check(dm("telegram", "1")); !d.Allowed || d.Problem != nil {
					errs <- fmt.Errorf("the owner was refused mid-approval: %+v", d)
					return
				}
				a.Check(dm("telegram", "7"))
			}
		}()
	}
	for _, user := range []string{"7", "8", "9"} {
		pairUser(t, other, "telegram", user)
		if d := a.Check(dm("telegram", user)); !d.Allowed || d.Rule != RulePaired {
			t.Errorf("just approved by the other store: %+v", d)
		}
		if _, err := other.Revoke(context.Background(), "telegram", user); err != nil {
			t.Fatal(err)
		}
		if d := a.Check(dm("telegram", user)); d.Allowed {
			t.Errorf("just revoked by the other store: %+v", d)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// The cost the runner pays per message: .env and the approved list unchanged.
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("TELEGRAM_ALLOWED_USERS=1,2,3\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	a, err := New(context.Background(), Options{Home: dir})
	if err != nil {
		b.Fatal(err)
	}
	src := dm("telegram", "3")
	b.ReportAllocs()
	for b.Loop() {
		if !a.Check(src).Allowed {
			b.Fatal("denied")
		}
	}
}
