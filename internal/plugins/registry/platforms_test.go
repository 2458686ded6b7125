package registry

import (
	"strings"
	"testing"
)

func TestPlatformsLastWriterWins(t *testing.T) {
	r := New(Options{})
	r.AddPlatform("a-plugin", &PlatformEntry{Name: "webhook", Label: "A", Plugin: "a-plugin"})
	r.AddPlatform("a-plugin", &PlatformEntry{Name: "irc", Label: "IRC", Plugin: "a-plugin"})
	// The same plugin registering a name twice replaces it silently.
	r.AddPlatform("a-plugin", &PlatformEntry{Name: "webhook", Label: "A2", Plugin: "a-plugin"})
	r.Commit("a-plugin")
	r.AddPlatform("b-plugin", &PlatformEntry{Name: "webhook", Label: "B", Plugin: "b-plugin"})
	if got, _ := r.Platforms(); len(got) != 2 {
		t.Fatalf("pending b is visible: %d entries", len(got))
	}
	r.Commit("b-plugin")
	got, replaced := r.Platforms()
	if len(got) != 2 || got[0].Name != "webhook" || got[0].Label != "B" || got[1].Name != "irc" {
		t.Fatalf("entries %+v", got)
	}
	if len(replaced) != 1 || !strings.Contains(replaced[0], "Platform 'webhook' re-registered (was A2 from plugin a-plugin, now B from plugin b-plugin)") {
		t.Fatalf("replaced %q", replaced)
	}
	if err := r.Dispose("b-plugin", "platform", "webhook", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Platforms(); len(got) != 2 || got[0].Label != "A2" {
		t.Fatalf("after dispose %+v", got)
	}
}

func TestPlatformReceiverBinding(t *testing.T) {
	r := New(Options{})
	if _, ok := r.PlatformReceiver("p", "webhook"); ok {
		t.Fatal("a route before any bind")
	}
	unbind := r.BindPlatform("p", "webhook", PlatformReceiver{})
	if _, ok := r.PlatformReceiver("p", "webhook"); !ok {
		t.Fatal("no route after bind")
	}
	if _, ok := r.PlatformReceiver("q", "webhook"); ok {
		t.Fatal("another plugin shares the route")
	}
	// A newer bind survives the older one's unbind.
	unbind2 := r.BindPlatform("p", "webhook", PlatformReceiver{})
	unbind()
	if _, ok := r.PlatformReceiver("p", "webhook"); !ok {
		t.Fatal("an old unbind removed the new route")
	}
	unbind2()
	if _, ok := r.PlatformReceiver("p", "webhook"); ok {
		t.Fatal("route after unbind")
	}
}
