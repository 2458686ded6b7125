package cluster

import (
	"strings"
	"testing"
	"time"
)

// PendingPayloads lists a role's actions until they are acked, claimed ones
// included (a claim may expire and be performed again), and no other role's.
func TestPendingPayloads(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	n := open(t, fast(url))
	for _, s := range []struct{ role, payload string }{{"discord", "one"}, {"discord", "two"}, {"telegram-poll", "other"}} {
		if err := n.Send(ctx, s.role, []byte(s.payload)); err != nil {
			t.Fatal(err)
		}
	}
	pending := func() string {
		t.Helper()
		ps, err := n.PendingPayloads(ctx, "discord")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, string(p))
		}
		return strings.Join(out, ",")
	}
	if got := pending(); got != "one,two" {
		t.Fatalf("pending %q, want one,two", got)
	}
	a, err := n.ClaimAction(ctx, "discord")
	if err != nil || a == nil {
		t.Fatalf("claim: %v %v", a, err)
	}
	if got := pending(); got != "one,two" {
		t.Fatalf("pending with one claimed: %q, want both", got)
	}
	if err := n.Ack(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != "two" {
		t.Fatalf("pending after the ack: %q, want two", got)
	}
}
