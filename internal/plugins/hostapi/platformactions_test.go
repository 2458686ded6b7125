package hostapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/testutil/discordfake"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// testRunner is the gateway at the seam: real adapters by platform name.
type testRunner struct {
	adapters map[string]platform.Adapter
	log      *slog.Logger
	injected []string // "plugin|key|text" of each Inject
	accept   bool
}

func (r *testRunner) Adapter(name string) (platform.Adapter, bool) {
	a, ok := r.adapters[name]
	return a, ok
}
func (r *testRunner) Inject(_ context.Context, pluginID, key, text string) bool {
	r.injected = append(r.injected, pluginID+"|"+key+"|"+text)
	return r.accept
}
func (r *testRunner) Logger() *slog.Logger { return r.log }

type boundGateway struct{ r GatewayRunner }

func (g boundGateway) Runner() GatewayRunner { return g.r }

// baseOnly hides every optional interface of an adapter: a platform that
// implements no platform action (as a plugin platform may).
type baseOnly struct{ platform.Adapter }

// runAdapter runs a until the test ends and waits for it to connect.
func runAdapter(t *testing.T, a platform.Adapter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, platform.Event) {}) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(20 * time.Second)
	for !a.Connected() {
		if time.Now().After(deadline) {
			t.Fatalf("%s adapter never connected", a.Name())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const dmChannel = "500000000000000020"

// Every outcome of ctx.platform_actions v1, through the real Telegram and
// Discord adapters against their loopback fakes, with the gate chain in
// upstream's order and the audit line in both logs.
func TestPlatformActions(t *testing.T) {
	tg := telegramfake.Start("1:tok")
	t.Cleanup(tg.Close)
	tga, err := telegram.New(telegram.Options{Token: "1:tok", BaseURL: tg.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runAdapter(t, tga)
	dc := discordfake.New(t)
	dc.AddChannel(discordfake.Channel{ID: dmChannel, Type: discordfake.ChannelDM})
	dca, err := discord.New(discord.Options{Token: discordfake.Token, BaseURL: dc.URL()})
	if err != nil {
		t.Fatal(err)
	}
	runAdapter(t, dca)
	idle, err := telegram.New(telegram.Options{Token: "2:tok", BaseURL: tg.URL})
	if err != nil {
		t.Fatal(err)
	}
	rn := &testRunner{adapters: map[string]platform.Adapter{
		"telegram": tga, "discord": dca, "whatsapp": idle, "slack": baseOnly{tga},
	}}

	granted := "plugins:\n  entries:\n    pa:\n      granted_capabilities: [gateway.platform_actions]\n"
	react := func(pl, chat, msg, emoji string) map[string]any {
		return map[string]any{"platform": pl, "chat_id": chat, "message_id": msg, "emoji": emoji}
	}
	title := func(pl, chat, thread, title string) map[string]any {
		return map[string]any{"platform": pl, "chat_id": chat, "thread_id": thread, "title": title}
	}
	fail := func(code, detail string) map[string]any {
		return map[string]any{"ok": false, "error": code, "detail": detail}
	}
	tests := []struct {
		name   string
		cfg    string
		noGW   bool
		verb   string
		kwargs map[string]any
		want   map[string]any
		// telegram is the Bot API call it must make, with its parameters.
		telegram       string
		telegramParams map[string]string
	}{
		{name: "no config: not granted", verb: "add_reaction", kwargs: react("telegram", "5", "7", "👀"),
			want: fail("capability_not_granted", "plugin 'pa' lacks the 'gateway.platform_actions' capability (grant via consent flow or plugins.entries.pa.allow_platform_actions)")},
		{name: "another capability is not this one", cfg: "plugins:\n  entries:\n    pa:\n      granted_capabilities: [gateway.plugin_status]\n",
			verb: "set_thread_title", kwargs: title("telegram", "5", "3", "t"),
			want: fail("capability_not_granted", "plugin 'pa' lacks the 'gateway.platform_actions' capability (grant via consent flow or plugins.entries.pa.allow_platform_actions)")},
		{name: "unreadable config: not granted", cfg: "<dir>", verb: "add_reaction", kwargs: react("telegram", "5", "7", "👀"),
			want: fail("capability_not_granted", "plugin 'pa' lacks the 'gateway.platform_actions' capability (grant via consent flow or plugins.entries.pa.allow_platform_actions)")},
		{name: "send_status asks for plugin_status", verb: "send_status", kwargs: map[string]any{},
			want: fail("capability_not_granted", "plugin 'pa' lacks the 'gateway.plugin_status' capability (grant via consent flow or plugins.entries.pa.allow_plugin_status)")},
		{name: "the gate comes before the arguments", verb: "add_reaction", kwargs: map[string]any{},
			want: fail("capability_not_granted", "plugin 'pa' lacks the 'gateway.platform_actions' capability (grant via consent flow or plugins.entries.pa.allow_platform_actions)")},
		{name: "missing argument", cfg: granted, verb: "add_reaction", kwargs: map[string]any{"platform": "telegram", "chat_id": "5", "emoji": "x"},
			want: fail("invalid_argument", "message_id must be a non-empty string")},
		{name: "empty argument", cfg: granted, verb: "add_reaction", kwargs: react("telegram", "", "7", "x"),
			want: fail("invalid_argument", "chat_id must be a non-empty string")},
		{name: "a number is no string", cfg: granted, verb: "set_thread_title", kwargs: map[string]any{"platform": "telegram", "chat_id": 5.0, "thread_id": "3", "title": "t"},
			want: fail("invalid_argument", "chat_id must be a non-empty string")},
		{name: "arguments in signature order", cfg: granted, verb: "set_thread_title", kwargs: map[string]any{"thread_id": "", "title": ""},
			want: fail("invalid_argument", "platform must be a non-empty string")},
		{name: "arguments before the gateway", cfg: granted, noGW: true, verb: "add_reaction", kwargs: react("telegram", "5", "7", ""),
			want: fail("invalid_argument", "emoji must be a non-empty string")},
		{name: "no gateway", cfg: granted, noGW: true, verb: "add_reaction", kwargs: react("telegram", "5", "7", "👀"),
			want: fail("gateway_unavailable", "no gateway runner is active in this process")},
		{name: "legacy key grants", cfg: "plugins:\n  entries:\n    pa:\n      allow_platform_actions: yes\n", noGW: true,
			verb: "add_reaction", kwargs: react("telegram", "5", "7", "👀"), want: fail("gateway_unavailable", "no gateway runner is active in this process")},
		{name: "unknown platform", cfg: granted, verb: "add_reaction", kwargs: react("myspace", "5", "7", "👀"),
			want: fail("unknown_platform", "unknown platform 'myspace'")},
		{name: "known platform without an adapter", cfg: granted, verb: "add_reaction", kwargs: react("matrix", "5", "7", "👀"),
			want: fail("adapter_not_registered", "no matrix adapter is registered")},
		{name: "adapter not connected", cfg: granted, verb: "set_thread_title", kwargs: title("WhatsApp ", "5", "3", "t"),
			want: fail("adapter_disconnected", "the whatsapp adapter is not connected")},
		{name: "verb not implemented", cfg: granted, verb: "add_reaction", kwargs: react("slack", "5", "7", "👀"),
			want: fail("unsupported_platform_action", "add_reaction is not implemented for slack")},
		{name: "telegram reaction", cfg: granted, verb: "add_reaction", kwargs: react(" Telegram", "-1001", "42", "👀"),
			want: map[string]any{"ok": true, "action": "add_reaction"}, telegram: "setMessageReaction",
			telegramParams: map[string]string{"chat_id": "-1001", "message_id": "42", "reaction": `[{"type":"emoji","emoji":"👀"}]`}},
		{name: "telegram topic rename", cfg: granted, verb: "set_thread_title", kwargs: title("telegram", "-1001", "17", "Plans"),
			want: map[string]any{"ok": true, "action": "set_thread_title"}, telegram: "editForumTopic",
			telegramParams: map[string]string{"chat_id": "-1001", "message_thread_id": "17", "name": "Plans"}},
		{name: "telegram thread id must be a number", cfg: granted, verb: "set_thread_title", kwargs: title("telegram", "-1001", "general", "t"),
			want: fail("action_failed", `telegram: chat "-1001" / thread "general": ids must be numbers`)},
		{name: "discord ids must be numeric", cfg: granted, verb: "add_reaction", kwargs: react("discord", "general", "700000000000000001", "👍"),
			want: fail("invalid_argument", "discord ids must be numeric")},
		{name: "discord reaction", cfg: granted, verb: "add_reaction", kwargs: react("discord", dmChannel, "700000000000000001", "👍"),
			want: map[string]any{"ok": true, "action": "add_reaction"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plLog, gwLog := &syncbuf.Buffer{}, &syncbuf.Buffer{}
			rn.log = slog.New(slog.NewTextHandler(gwLog, nil))
			var gw GatewayServices = boundGateway{rn}
			if tc.noGW {
				gw = boundGateway{nil}
			}
			s := paSession(t, tc.cfg, gw, slog.New(slog.NewTextHandler(plLog, nil)))
			before := len(tg.Calls(""))
			got := callPlatformAction(t, s, tc.verb, tc.kwargs)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("platform_actions.%s = %#v\nwant %#v", tc.verb, got, tc.want)
			}
			calls := tg.Calls("")[before:]
			if tc.telegram == "" {
				if len(calls) != 0 {
					t.Fatalf("the Bot API was called: %+v", calls)
				}
			} else {
				if len(calls) != 1 || calls[0].Method != tc.telegram {
					t.Fatalf("Bot API calls = %+v, want one %s", calls, tc.telegram)
				}
				for k, v := range tc.telegramParams {
					if calls[0].Params[k] != v {
						t.Errorf("%s %s = %q, want %q", tc.telegram, k, calls[0].Params[k], v)
					}
				}
			}
			pl, _ := tc.kwargs["platform"].(string)
			audit := "platform_action plugin=pa verb=" + tc.verb + " platform=" + strings.ToLower(strings.TrimSpace(pl)) + " ok="
			if tc.want["ok"] == true {
				audit += "True"
			} else {
				audit += "False error=" + tc.want["error"].(string)
			}
			if !strings.Contains(plLog.String(), `msg="`+audit+`"`) {
				t.Errorf("plugins log lacks %q:\n%s", audit, plLog.String())
			}
			if gwLog := gwLog.String(); tc.noGW == strings.Contains(gwLog, audit) {
				t.Errorf("gateway log (gateway running: %v):\n%s", !tc.noGW, gwLog)
			}
		})
	}
	dc.Snapshot(func(v discordfake.View) {
		if r := v.Reactions(); len(r) != 1 || r[0] != (discordfake.Reaction{ChannelID: dmChannel, MessageID: "700000000000000001", Emoji: "👍"}) {
			t.Errorf("discord reactions = %+v, want the one reaction", r)
		}
	})
}

// A failure's text is cut to 512 characters, as upstream's str(exc)[:512].
func TestPlatformActionFailureIsCut(t *testing.T) {
	tg := telegramfake.Start("1:tok")
	t.Cleanup(tg.Close)
	tga, err := telegram.New(telegram.Options{Token: "1:tok", BaseURL: tg.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runAdapter(t, tga)
	rn := &testRunner{log: slog.New(slog.DiscardHandler), adapters: map[string]platform.Adapter{"telegram": tga}}
	s := paSession(t, "plugins:\n  entries:\n    pa:\n      allow_platform_actions: true\n", boundGateway{rn}, nil)
	tg.Fail("editForumTopic", 1, telegramfake.Failure{Code: 400, Description: "Bad Request: " + strings.Repeat("ü", 600)})
	got := callPlatformAction(t, s, "set_thread_title", map[string]any{"platform": "telegram", "chat_id": "-1001", "thread_id": "3", "title": "t"})
	detail, _ := got["detail"].(string)
	if got["error"] != "action_failed" || len([]rune(detail)) != 512 || !strings.HasPrefix(detail, "telegram: editForumTopic: ") {
		t.Fatalf("got %#v (%d characters)", got, len([]rune(detail)))
	}
	tg.Fail("setMessageReaction", 1, telegramfake.Failure{Code: 400, Description: "Bad Request: REACTION_INVALID"})
	got = callPlatformAction(t, s, "add_reaction", map[string]any{"platform": "telegram", "chat_id": "-1001", "message_id": "3", "emoji": "🦄"})
	if want := map[string]any{"ok": false, "error": "action_failed", "detail": "telegram set_message_reaction failed"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestCutRunes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"", 3, ""}, {"abc", 3, "abc"}, {"abcd", 3, "abc"}, {"üüüü", 2, "üü"}, {"ab", 0, ""}} {
		if got := cutRunes(tc.in, tc.n); got != tc.want {
			t.Errorf("cutRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// paSession is a session of plugin "pa" with config.yaml holding cfg ("<dir>":
// a directory where the file should be).
func paSession(t *testing.T, cfg string, gw GatewayServices, log *slog.Logger) *Session {
	t.Helper()
	h := home.Home{Dir: t.TempDir()}
	switch cfg {
	case "":
	case "<dir>":
		if err := os.Mkdir(h.ConfigPath(), 0o700); err != nil {
			t.Fatal(err)
		}
	default:
		if err := os.WriteFile(h.ConfigPath(), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host := New(Options{Registry: registry.New(registry.Options{}), Store: configStore(h), Home: h, Plugins: directory{}, Gateway: gw, Logger: log})
	t.Cleanup(host.Close)
	return host.Session(&testCaller{id: "pa"})
}

func callPlatformAction(t *testing.T, s *Session, verb string, kwargs map[string]any) map[string]any {
	t.Helper()
	params, err := json.Marshal(protocol.FacadeParams{Name: "platform_actions." + verb, Kwargs: kwargs})
	if err != nil {
		t.Fatal(err)
	}
	v, perr := call(t, s, protocol.MethodFacade, string(params))
	if perr != nil {
		t.Fatalf("platform_actions.%s raised %v: it never raises", verb, perr)
	}
	env, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("platform_actions.%s returned %#v", verb, v)
	}
	return env
}
