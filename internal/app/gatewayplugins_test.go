package app

import (
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

func TestPluginPlatformEnabled(t *testing.T) {
	ent := &registry.PlatformEntry{Name: "webhook", Details: registry.PlatformDetails{RequiredEnv: []string{"WH_TOKEN", "WH_URL"}}}
	bare := &registry.PlatformEntry{Name: "webhook"}
	for _, tc := range []struct {
		name, yaml string
		env        map[string]string
		ent        *registry.PlatformEntry
		on, vEnv   bool
		err        string
	}{
		{name: "nothing set", ent: ent},
		{name: "enabled in config", yaml: "platforms:\n  webhook:\n    enabled: true\n", ent: ent, on: true},
		{name: "explicit false beats env", yaml: "platforms:\n  webhook:\n    enabled: false\n", ent: ent,
			env: map[string]string{"WH_TOKEN": "t", "WH_URL": "u"}},
		{name: "every required_env set", ent: ent, env: map[string]string{"WH_TOKEN": "t", "WH_URL": "u"}, on: true, vEnv: true},
		{name: "one required_env missing", ent: ent, env: map[string]string{"WH_TOKEN": "t"}},
		{name: "no required_env never enables by env", ent: bare},
		{name: "not a boolean", yaml: "platforms:\n  webhook:\n    enabled: maybe\n", ent: ent, err: "platforms.webhook.enabled in config.yaml is maybe: use true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := config.Parse([]byte(tc.yaml), "config.yaml")
			if err != nil {
				t.Fatal(err)
			}
			on, fromEnv, err := pluginPlatformEnabled(doc, func(k string) string { return tc.env[k] }, tc.ent)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || on != tc.on || fromEnv != tc.vEnv {
				t.Fatalf("on=%v fromEnv=%v err=%v; want on=%v fromEnv=%v", on, fromEnv, err, tc.on, tc.vEnv)
			}
		})
	}
}

func TestPlatformExtra(t *testing.T) {
	env := func(k string) string { return map[string]string{"URL": "http://127.0.0.1:9", "N": "3"}[k] }
	doc, err := config.Parse([]byte("platforms:\n  webhook:\n    token: \" ${N}x \"\n    extra:\n      url: ${URL}/cb\n      port: 8080\n      nested:\n        list: [\"${N}\", 4]\n  bad:\n    extra: [1]\n  missing:\n    extra:\n      k: ${NOPE}\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra, err := platformExtra(doc, env, "webhook")
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := extra["nested"].(map[string]any)
	list, _ := nested["list"].([]any)
	if extra["url"] != "http://127.0.0.1:9/cb" || extra["port"] == nil || len(list) != 2 || list[0] != "3" {
		t.Fatalf("extra %#v", extra)
	}
	if tok, err := platformString(doc, env, "webhook", "token"); err != nil || tok != "3x" {
		t.Fatalf("token %q %v", tok, err)
	}
	if none, err := platformExtra(doc, env, "absent"); err != nil || none != nil {
		t.Fatalf("absent platform: %v %v", none, err)
	}
	if _, err := platformExtra(doc, env, "bad"); err == nil || !strings.Contains(err.Error(), "platforms.bad.extra in config.yaml must be a mapping") {
		t.Fatalf("a list as extra: %v", err)
	}
	if _, err := platformExtra(doc, env, "missing"); err == nil || !strings.Contains(err.Error(), "platforms.missing.extra.k refers to ${NOPE}") {
		t.Fatalf("an unset reference: %v", err)
	}
}
