package cluster

import (
	"testing"
	"time"
)

// SendToOnce queues an update for one member once per update id, sharing
// Enqueue's dedupe, and NextDirect on that member gets it.
func TestSendToOnce(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	n := open(t, fast(url))
	for i, want := range []bool{true, false} {
		sent, err := n.SendToOnce(ctx, "telegram", "2", n.ID(), []byte("answer"))
		if err != nil || sent != want {
			t.Fatalf("send %d: %v %v, want %v", i, sent, err, want)
		}
	}
	if queued, err := n.Enqueue(ctx, "telegram", "2", "k", nil); err != nil || queued {
		t.Fatalf("an update sent to a member was queued too: %v %v", queued, err)
	}
	act, err := n.NextDirect(ctx)
	if err != nil || string(act.Payload) != "answer" {
		t.Fatalf("next direct: %v %v", act, err)
	}
	if err := n.Ack(ctx, act); err != nil {
		t.Fatal(err)
	}
	if ps, err := n.PendingPayloads(ctx, memberRole(n.ID())); err != nil || len(ps) != 0 {
		t.Fatalf("left %q %v, want nothing", ps, err)
	}
}
