package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/telegram"
	"github.com/hermes-go/hermes/internal/session/pgstore"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// turnLog is a test engine shared by the processes of a test: it answers
// "answer: <text>" after delay, records which process ran which text, and
// blocks the turns of a process told to (its turn is the one in flight when
// that process dies).
type turnLog struct {
	mu     sync.Mutex
	ran    []string // "<proc> <text>"
	block  map[string]bool
	inTurn chan string   // the text of each turn that blocked
	dead   chan struct{} // closed when the blocked process is killed
	delay  time.Duration
}

func newTurnLog() *turnLog {
	return &turnLog{block: map[string]bool{}, inTurn: make(chan string, 16), dead: make(chan struct{})}
}

func (l *turnLog) ranBy(proc string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.ran {
		if p, text, _ := strings.Cut(r, " "); p == proc {
			out = append(out, text)
		}
	}
	return out
}

// procEngine is one process's view of the turn log. A turn of "dangerous"
// asks for approval through the process's runner and answers the choice.
type procEngine struct {
	name   string
	log    *turnLog
	runner *atomic.Pointer[gateway.Runner]
}

func (e procEngine) Turn(ctx context.Context, key string, src platform.Source, text string) (gateway.TurnResult, error) {
	if text == "dangerous" {
		e.log.mu.Lock()
		e.log.ran = append(e.log.ran, e.name+" "+text)
		e.log.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		choice, err := e.runner.Load().Ask(actx, key, src, gateway.Question{Command: "rm -r /tmp/x", Description: "a test"})
		if err != nil {
			return gateway.TurnResult{SessionID: "s", Reply: "no answer: " + err.Error()}, nil
		}
		return gateway.TurnResult{SessionID: "s", Reply: "approved: " + choice}, nil
	}
	e.log.mu.Lock()
	e.log.ran = append(e.log.ran, e.name+" "+text)
	block, delay := e.log.block[e.name], e.log.delay
	e.log.mu.Unlock()
	if block {
		e.log.inTurn <- text
		// Until the process is killed; then the turn fails, and what its
		// worker does about it (Fail) no longer reaches the database.
		<-e.log.dead
		return gateway.TurnResult{}, errors.New("the process died")
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	return gateway.TurnResult{SessionID: "s", Reply: "answer: " + text}, nil
}

func (procEngine) NewSession(context.Context, string, platform.Source) (string, error) {
	return "s", nil
}
func (procEngine) Info(context.Context, string) (gateway.SessionInfo, error) {
	return gateway.SessionInfo{}, nil
}

// pollProc is one gateway process of a cluster in Telegram polling mode,
// wired as `hermes gateway run` wires it (joinCluster, runCluster): the
// long poll behind the election, each polled update queued, workers taking
// turns from the queue.
type pollProc struct {
	name  string
	node  *cluster.Node
	tg    *telegram.Adapter
	o     *ownedAdapter
	g     *Gateway
	turns *turnLog
	// cut ends the process's connections to Telegram and its election,
	// as its death would.
	cut   context.CancelFunc
	done  chan error
	halts func()
}

// cuttable is the runner's view of the owned adapter: the same adapter,
// whose Run also ends when the test cuts the process off.
type cuttable struct {
	*ownedAdapter
	ctx context.Context
}

func (c cuttable) Run(ctx context.Context, h platform.Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	return c.ownedAdapter.Run(ctx, h)
}

func startPollProc(t *testing.T, url string, srv *telegramfake.Server, name string, turns *turnLog) *pollProc {
	t.Helper()
	return startPollProcWorkers(t, url, srv, name, turns, 4)
}

func startPollProcWorkers(t *testing.T, url string, srv *telegramfake.Server, name string, turns *turnLog, workers int) *pollProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Open(ctx, fastCluster(url))
	if err != nil {
		t.Fatal(err)
	}
	st, err := pgstore.Open(ctx, url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := telegram.New(telegram.Options{Token: srv.Token, BaseURL: srv.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	p := &pollProc{name: name, node: n, tg: tg, turns: turns, done: make(chan error, 1)}
	p.o = &ownedAdapter{inner: tg, role: roleTelegramPoll, node: n, log: log}
	owners := &gatewayOwners{node: n, owned: map[string]*ownedAdapter{telegram.Name: p.o}}
	cutCtx, cut := context.WithCancel(context.Background())
	p.cut = cut
	var runner atomic.Pointer[gateway.Runner]
	r, err := gateway.New(gateway.Options{Adapters: []platform.Adapter{cuttable{p.o, cutCtx}}, Engine: procEngine{name: name, log: turns, runner: &runner}, Auth: allowAll{},
		DrainTimeout: time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	runner.Store(r)
	p.g = &Gateway{runner: r, engine: &gatewayEngine{store: st}, owners: owners,
		cluster: &gatewayCluster{cfg: fastCluster(url), node: n, workers: workers, log: log}}
	p.g.joinCluster([]platform.Adapter{p.o})
	if p.g.cluster.telegram != tg {
		t.Fatal("joinCluster did not find the Telegram adapter behind the election")
	}
	owners.setRunner(r)
	rctx, stop := context.WithCancel(context.Background())
	stopCluster, err := p.g.runCluster(rctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- r.Run(rctx) }()
	var once sync.Once
	p.halts = func() {
		once.Do(func() {
			stop()
			<-p.done
			stopCluster()
		})
	}
	t.Cleanup(func() { p.halts(); cut(); st.Close(); n.Close() })
	return p
}

// halt stops the process as SIGTERM would.
func (p *pollProc) halt() { p.halts() }

// kill stops the process as kill -9 would, as far as the database and
// Telegram can tell: its heartbeats stop (its leases then expire), nothing
// it does reaches the database any more, its long poll and its election end
// (a killed process's sockets close). Its running turn then fails without
// a word to the chat, and its worker's Fail cannot reach the database.
func (p *pollProc) kill() {
	p.node.Close()
	p.cut()
	close(p.turns.dead)
}

// answered are the texts of the bot's messages, sorted.
func answered(srv *telegramfake.Server) []string {
	var out []string
	for _, c := range srv.Calls("sendMessage") {
		if c.Status == 200 {
			out = append(out, c.Params["chat_id"]+" "+c.Params["text"])
		}
	}
	sort.Strings(out)
	return out
}

// answeredInOrder are the bot's messages to chat, in the order sent.
func answeredInOrder(srv *telegramfake.Server, chat string) []string {
	var out []string
	for _, c := range srv.Calls("sendMessage") {
		if c.Status == 200 && c.Params["chat_id"] == chat {
			out = append(out, c.Params["text"])
		}
	}
	return out
}

// queueEmpty waits for the queue to empty (an item is finished just after
// its answer is sent) and checks nothing was dead-lettered.
func queueEmpty(t *testing.T, n *cluster.Node) {
	t.Helper()
	var st cluster.Status
	waitUntil(t, "the queue to empty", 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		st, err = n.Status(ctx)
		return err == nil && st.QueueDepth == 0
	})
	if st.Dead != 0 {
		t.Fatalf("%d dead letters; want none", st.Dead)
	}
}

// Telegram long polling across owners: the first owner queues a batch and
// dies before its next poll confirms it; the next owner gets the batch
// again, which the queue's dedupe (Enqueue, keyed by update id) leaves as
// it was, then queues what comes next. Each update is answered once.
func TestPolledBatchAnsweredOnceAcrossOwners(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	var ids []int64
	for chat := int64(1); chat <= 3; chat++ {
		ids = append(ids, srv.PushText(telegramfake.Message{ChatID: chat, UserID: chat, Text: "hello"}))
	}
	turns := newTurnLog()
	first := startPollProc(t, url, srv, "first", turns)
	// The first owner's process dies right after queuing its third update:
	// that commit went through, its next poll (the confirmation) never happens.
	var offered atomic.Int32
	stalled := make(chan struct{})
	first.tg.SetAccept(func(ctx context.Context, id int64, ev platform.Event, raw []byte) error {
		offered.Add(1)
		err := first.g.enqueueTelegram(ctx, id, ev, raw)
		if id == ids[2] {
			close(stalled)
			<-ctx.Done()
		}
		return err
	})
	<-stalled
	waitUntil(t, "the batch's answers", 15*time.Second, func() bool { return len(answered(srv)) == 3 })
	second := startPollProc(t, url, srv, "second", turns)
	var reoffered atomic.Int32
	second.tg.SetAccept(func(ctx context.Context, id int64, ev platform.Event, raw []byte) error {
		reoffered.Add(1)
		return second.g.enqueueTelegram(ctx, id, ev, raw)
	})
	first.halt()
	waitUntil(t, "the second owner to take over", 10*time.Second, second.o.leading.Load)
	srv.PushText(telegramfake.Message{ChatID: 4, UserID: 4, Text: "hello"})
	waitUntil(t, "the new update's answer", 15*time.Second, func() bool { return len(answered(srv)) >= 4 })
	time.Sleep(500 * time.Millisecond) // a repeated answer would be sent by now
	want := "1 answer: hello|2 answer: hello|3 answer: hello|4 answer: hello"
	if got := strings.Join(answered(srv), "|"); got != want {
		t.Fatalf("answers %q\nwant    %q", got, want)
	}
	if got := reoffered.Load(); got != 4 {
		t.Fatalf("the second owner was offered %d updates, want 4: the unconfirmed batch of 3 again, then the new one", got)
	}
	if _, most := srv.Pollers(); most != 1 {
		t.Fatalf("%d pollers at once", most)
	}
	queueEmpty(t, second.node)
}

// The owner of the long poll dies mid-turn: the update it queued and was
// running is not lost (as it was when the owner dispatched it locally
// after marking it seen): its lease expires and another process runs it
// again, answering once.
func TestPolledUpdateRedeliveredWhenOwnerDiesMidTurn(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	turns := newTurnLog()
	turns.block["first"] = true
	first := startPollProc(t, url, srv, "first", turns)
	waitUntil(t, "the first process to own the poll", 10*time.Second, first.o.leading.Load)
	srv.PushText(telegramfake.Message{ChatID: 7, UserID: 7, Text: "hello"})
	select {
	case <-turns.inTurn:
	case <-time.After(15 * time.Second):
		t.Fatal("the first process never started the turn")
	}
	second := startPollProc(t, url, srv, "second", turns)
	first.kill()
	waitUntil(t, "the answer from the second process", 20*time.Second, func() bool { return len(answered(srv)) >= 1 })
	time.Sleep(500 * time.Millisecond)
	if got := strings.Join(answered(srv), "|"); got != "7 answer: hello" {
		t.Fatalf("answers %q, want the one answer", got)
	}
	if got := turns.ranBy("second"); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("the second process ran %q, want the redelivered hello", got)
	}
	queueEmpty(t, second.node)
}

// The database fails the owner while it polls: first by refusing the
// queue's insert (the owner keeps the poll: its election's connection is
// fine), then by going down altogether (the owner steps down; nobody polls
// until it is back). Either way no update is confirmed before it is queued,
// none is lost, and once the database is back each is answered once, in
// order.
func TestPolledUpdatesWaitOutTheDatabase(t *testing.T) {
	pg := pgtest.Start(t)
	url := pg.DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	turns := newTurnLog()
	p := startPollProc(t, url, srv, "only", turns)
	waitUntil(t, "the process to own the poll", 10*time.Second, p.o.leading.Load)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exec := func(sql string) {
		t.Helper()
		if _, err := p.node.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	// The insert refused: polled, not queued, not confirmed.
	exec("ALTER TABLE cluster_seen RENAME TO cluster_seen_away")
	var ids []int64
	for i := 1; i <= 3; i++ {
		ids = append(ids, srv.PushText(telegramfake.Message{ChatID: 9, UserID: 9, Text: fmt.Sprintf("m%d", i)}))
	}
	waitUntil(t, "the poll to receive the updates", 10*time.Second, func() bool {
		_, ok := srv.DeliveredAt(ids[0])
		return ok
	})
	polls := srv.Polls()
	waitUntil(t, "the batch to be polled again", 10*time.Second, func() bool { return srv.Polls() >= polls+2 })
	if got := answered(srv); len(got) != 0 {
		t.Fatalf("answered %q while the queue refused them", got)
	}
	exec("ALTER TABLE cluster_seen_away RENAME TO cluster_seen")
	waitUntil(t, "the first three answers", 15*time.Second, func() bool { return len(answered(srv)) >= 3 })

	// The server down: updates sent meanwhile wait at Telegram.
	if err := pg.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	for i := 4; i <= 6; i++ {
		srv.PushText(telegramfake.Message{ChatID: 9, UserID: 9, Text: fmt.Sprintf("m%d", i)})
	}
	time.Sleep(time.Second)
	if got := len(answered(srv)); got != 3 {
		t.Fatalf("%d answers with the database down, want the first 3", got)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the last three answers", 30*time.Second, func() bool { return len(answered(srv)) >= 6 })
	time.Sleep(500 * time.Millisecond) // a repeated answer would be sent by now
	want := "answer: m1|answer: m2|answer: m3|answer: m4|answer: m5|answer: m6"
	if got := strings.Join(answeredInOrder(srv, "9"), "|"); got != want {
		t.Fatalf("answers %q\nwant    %q (once each, in order)", got, want)
	}
	queueEmpty(t, p.node)
}

// Two chats, several messages each, two processes taking turns from the
// queue (turns slow enough that both run at once): each chat's messages
// are answered in update order, one at a time.
func TestPolledChatsAnsweredInOrder(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	turns := newTurnLog()
	turns.delay = 30 * time.Millisecond
	a := startPollProc(t, url, srv, "a", turns)
	b := startPollProc(t, url, srv, "b", turns)
	waitUntil(t, "an owner of the poll", 10*time.Second, func() bool { return a.o.leading.Load() || b.o.leading.Load() })
	const per = 6
	for i := 1; i <= per; i++ {
		for _, chat := range []int64{11, 12} {
			srv.PushText(telegramfake.Message{ChatID: chat, UserID: chat, Text: fmt.Sprintf("m%d", i)})
		}
	}
	waitUntil(t, "every answer", 30*time.Second, func() bool { return len(answered(srv)) >= 2*per })
	time.Sleep(300 * time.Millisecond)
	var want []string
	for i := 1; i <= per; i++ {
		want = append(want, fmt.Sprintf("answer: m%d", i))
	}
	for _, chat := range []string{"11", "12"} {
		if got := answeredInOrder(srv, chat); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("chat %s answered %q, want %q", chat, got, want)
		}
	}
	if len(turns.ranBy("a")) == 0 || len(turns.ranBy("b")) == 0 {
		t.Logf("turns ran on one process only (a %d, b %d): order was not tested across processes", len(turns.ranBy("a")), len(turns.ranBy("b")))
	}
	queueEmpty(t, a.node)
}

// A button press, an edited message and a reaction polled in a cluster go
// through the queue like messages, decoded by whichever worker claims them:
// the button is acknowledged (answerCallbackQuery), nothing is left queued
// or dead.
func TestPolledNonMessageUpdatesThroughTheQueue(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	turns := newTurnLog()
	p := startPollProc(t, url, srv, "only", turns)
	srv.PushCallback(5, 5, 3, "hermes-approve:zz:once")
	srv.PushUpdate(map[string]any{"edited_message": map[string]any{"message_id": 3, "date": time.Now().Unix(), "edit_date": time.Now().Unix(),
		"text": "edited", "from": map[string]any{"id": 5, "is_bot": false, "first_name": "u"}, "chat": map[string]any{"id": 5, "type": "private", "first_name": "u"}}})
	srv.PushUpdate(map[string]any{"message_reaction": map[string]any{"chat": map[string]any{"id": 5, "type": "private"}, "message_id": 3,
		"user": map[string]any{"id": 5, "is_bot": false, "first_name": "u"}, "date": time.Now().Unix(),
		"old_reaction": []any{}, "new_reaction": []any{map[string]any{"type": "emoji", "emoji": "👍"}}}})
	srv.PushText(telegramfake.Message{ChatID: 5, UserID: 5, Text: "after"})
	waitUntil(t, "the message after them answered", 15*time.Second, func() bool { return len(answered(srv)) >= 1 })
	acks := srv.Calls("answerCallbackQuery")
	if len(acks) != 1 || acks[0].Params["text"] != "This question is no longer open." {
		t.Fatalf("answerCallbackQuery calls %+v, want the button acknowledged once", acks)
	}
	if got := turns.ranBy("only"); strings.Join(got, "|") != "after" {
		t.Fatalf("turns %q: only the message starts one", got)
	}
	queueEmpty(t, p.node)
}

// approvalButton is the callback data of the "Approve once" button of the
// bot's last question.
func approvalButton(t *testing.T, srv *telegramfake.Server) (data string, messageID int) {
	t.Helper()
	for _, c := range srv.Calls("sendMessage") {
		var markup struct {
			InlineKeyboard [][]struct {
				Text         string `json:"text"`
				CallbackData string `json:"callback_data"`
			} `json:"inline_keyboard"`
		}
		if c.Status != 200 || c.Params["reply_markup"] == "" || json.Unmarshal([]byte(c.Params["reply_markup"]), &markup) != nil {
			continue
		}
		for _, row := range markup.InlineKeyboard {
			for _, b := range row {
				if b.Text == "Approve once" {
					data, messageID = b.CallbackData, c.MessageID
				}
			}
		}
	}
	return data, messageID
}

// A turn waiting for approval on one process, its question answered by a
// button and by /approve polled by another (the owner of the long poll,
// which runs no turns): the answers are not queued behind the turn they
// answer (which would hold them until the question timed out) but go to the
// process running it, which takes them at once.
func TestPolledApprovalReachesTheTurnsProcess(t *testing.T) {
	url := pgtest.Start(t).DB(t)
	srv := telegramfake.Start("1:tok")
	defer srv.Close()
	turns := newTurnLog()
	owner := startPollProcWorkers(t, url, srv, "owner", turns, 0)
	waitUntil(t, "the owner of the poll", 10*time.Second, owner.o.leading.Load)
	startPollProc(t, url, srv, "worker", turns)

	srv.PushText(telegramfake.Message{ChatID: 21, UserID: 21, Text: "dangerous"})
	var data string
	var msgID int
	waitUntil(t, "the approval question", 15*time.Second, func() bool { data, msgID = approvalButton(t, srv); return data != "" })
	srv.PushCallback(21, 21, msgID, data)
	waitUntil(t, "the approved answer", 10*time.Second, func() bool {
		return slices.Contains(answeredInOrder(srv, "21"), "approved: once")
	})
	if acks := srv.Calls("answerCallbackQuery"); len(acks) != 1 || acks[0].Params["text"] != "" {
		t.Fatalf("answerCallbackQuery %+v, want one plain acknowledgement", acks)
	}

	srv.PushText(telegramfake.Message{ChatID: 21, UserID: 21, Text: "dangerous"})
	waitUntil(t, "the second question", 15*time.Second, func() bool {
		n := 0
		for _, text := range answeredInOrder(srv, "21") {
			if strings.HasPrefix(text, "⚠️ Approval needed") {
				n++
			}
		}
		return n == 2
	})
	srv.PushText(telegramfake.Message{ChatID: 21, UserID: 21, Text: "/approve"})
	waitUntil(t, "the second approved answer", 10*time.Second, func() bool {
		n := 0
		for _, text := range answeredInOrder(srv, "21") {
			if text == "approved: once" {
				n++
			}
		}
		return n == 2
	})
	if got := turns.ranBy("owner"); len(got) != 0 {
		t.Fatalf("the owner ran turns %q; it has no workers", got)
	}
	queueEmpty(t, owner.node)
}
