package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// benchChats is the 1,000 distinct chats (HERMES_BENCH_CHATS overrides).
func benchChats() int {
	if n, err := strconv.Atoi(os.Getenv("HERMES_BENCH_CHATS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

const benchRounds = 5

// Overhead runs: this many chats, each sending this many messages, one
// message in flight at a time (no queueing behind other chats).
const (
	overheadChats  = 250
	overheadRounds = 3
)

// workload sends one message from every chat, waits until all are answered,
// five times over, and reports messages/s and the queueing-inclusive latency:
// from a message's arrival at the Bot API to its answer's sendMessage, with
// the wait behind the round's other chats and the model call in it.
func workload(b *testing.B, tg *telegramfake.Server, chats int) {
	b.Helper()
	sentAt := map[string]time.Time{} // "chat/round" → pushed
	var lat []time.Duration
	base := len(tg.Calls("sendMessage"))
	cpu0 := processCPU()
	start := time.Now()
	for round := range benchRounds {
		for c := 1; c <= chats; c++ {
			sentAt[strconv.Itoa(c)+"/"+strconv.Itoa(round)] = time.Now()
			tg.PushText(telegramfake.Message{ChatID: int64(c), UserID: int64(c), Text: "message " + strconv.Itoa(round)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		calls, err := tg.WaitCalls(ctx, "sendMessage", base+chats*(round+1))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range calls[base+chats*round:] {
			if t0, ok := sentAt[c.Params["chat_id"]+"/"+strconv.Itoa(round)]; ok {
				lat = append(lat, c.At.Sub(t0))
			}
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(chats*benchRounds)/elapsed.Seconds(), "msgs/s")
	// CPU per message, the fakes' included: steadier than msgs/s when other
	// work shares the machine.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(chats*benchRounds), "cpu-µs/msg")
	reportPercentiles(b, lat, "queued")
}

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPercentiles reports the p50 and p99 of lat as <label>-p50-ms, -p99-ms.
func reportPercentiles(b *testing.B, lat []time.Duration, label string) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, label+"-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, label+"-p99-ms")
}

// overhead sends overheadChats × overheadRounds messages one at a time, each
// after the previous one was answered, and reports the overhead: from
// the update's arrival at the bot (the getUpdates answer that carried it) to
// its answer's sendMessage, minus the model's own time for that turn (what
// the loopback model took to answer the requests it received meanwhile; nil
// model: none, the floor). Nothing queues behind another chat here.
func overhead(b *testing.B, tg *telegramfake.Server, model *llmtest.Server) {
	b.Helper()
	type span struct{ from, to time.Time }
	var spans []span
	base := len(tg.Calls("sendMessage"))
	for round := range overheadRounds {
		for c := 1; c <= overheadChats; c++ {
			id := tg.PushText(telegramfake.Message{ChatID: int64(c), UserID: int64(c), Text: "message " + strconv.Itoa(round)})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			calls, err := tg.WaitCalls(ctx, "sendMessage", base+len(spans)+1)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			from, ok := tg.DeliveredAt(id)
			if !ok {
				b.Fatalf("update %d was answered but never delivered", id)
			}
			spans = append(spans, span{from, calls[len(calls)-1].At})
		}
	}
	var reqs []llmtest.Request
	if model != nil {
		reqs = model.Requests()
		slices.SortFunc(reqs, func(x, y llmtest.Request) int { return x.Received.Compare(y.Received) })
	}
	lat := make([]time.Duration, 0, len(spans))
	var modelTime []time.Duration
	for _, s := range spans {
		var took time.Duration
		for _, r := range reqs {
			if !r.Received.Before(s.from) && r.Received.Before(s.to) {
				took += r.Took
			}
		}
		modelTime = append(modelTime, took)
		lat = append(lat, s.to.Sub(s.from)-took)
	}
	reportPercentiles(b, lat, "overhead")
	if model != nil {
		reportPercentiles(b, modelTime, "model")
	}
}

func benchGateway(b *testing.B, chats, replies int) *gatewayRun {
	b.Helper()
	allow := make([]string, chats)
	for i := range allow {
		allow[i] = strconv.Itoa(i + 1)
	}
	g := startGateway(b, "display:\n  busy_input_mode: queue\n", "TELEGRAM_ALLOWED_USERS="+strings.Join(allow, ",")+"\n",
		llmtest.Reply{Content: "ok", Repeat: replies})
	g.model.Lean()
	return g
}

// BenchmarkGateway1000Chats is the throughput figure: 1,000 chats × 5
// messages through the real gateway (Telegram adapter, runner, agent,
// state.db) with the instant loopback model, and the memory an idle
// conversation holds.
func BenchmarkGateway1000Chats(b *testing.B) {
	chats := benchChats()
	for range b.N {
		g := benchGateway(b, chats, chats*benchRounds)
		workload(b, g.tg, chats)
		// What an idle conversation kept in memory costs: the heap freed when
		// the engine drops every one it holds (the fakes' records stay).
		e := g.gw.engine
		e.mu.Lock()
		live := len(e.sessions)
		e.mu.Unlock()
		var held, dropped runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&held)
		e.mu.Lock()
		e.maxLive = 0
		e.mu.Unlock()
		e.evict()
		runtime.GC()
		runtime.ReadMemStats(&dropped)
		if live > 0 {
			b.ReportMetric(float64(int64(held.HeapAlloc)-int64(dropped.HeapAlloc))/float64(live)/1024, "KB/live-session")
		}
		g.stop(b)
	}
}

// BenchmarkGatewayOverhead is the latency figure: the gateway's own
// time per message (update received → sendMessage, minus the model's time),
// one message in flight, for new conversations (the first round) and
// continued ones.
func BenchmarkGatewayOverhead(b *testing.B) {
	for range b.N {
		g := benchGateway(b, overheadChats, overheadChats*overheadRounds)
		overhead(b, g.tg, g.model)
		g.stop(b)
	}
}

// BenchmarkGatewayFloor is the floor the gateway is measured against: a
// minimal loop that long-polls the same fake and answers each update with
// one sendMessage.
func BenchmarkGatewayFloor(b *testing.B) {
	chats := benchChats()
	for range b.N {
		floor(b, func(tg *telegramfake.Server) { workload(b, tg, chats) })
	}
}

// BenchmarkGatewayFloorOverhead is the floor's figure of the overhead run.
func BenchmarkGatewayFloorOverhead(b *testing.B) {
	for range b.N {
		floor(b, func(tg *telegramfake.Server) { overhead(b, tg, nil) })
	}
}

func floor(b *testing.B, run func(*telegramfake.Server)) {
	b.Helper()
	tg := telegramfake.Start("1:tok")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		floorLoop(ctx, tg)
	}()
	run(tg)
	cancel()
	tg.Close()
	<-done
}

func floorLoop(ctx context.Context, tg *telegramfake.Server) {
	client := &http.Client{}
	post := func(method string, body any) []byte {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tg.URL+"/bot"+tg.Token+"/"+method, bytes.NewReader(b))
		if err != nil {
			return nil
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return buf.Bytes()
	}
	offset := int64(0)
	for ctx.Err() == nil {
		var ans struct {
			Result []struct {
				ID      int64 `json:"update_id"`
				Message struct {
					Chat struct {
						ID int64 `json:"id"`
					} `json:"chat"`
				} `json:"message"`
			} `json:"result"`
		}
		_ = json.Unmarshal(post("getUpdates", map[string]any{"offset": offset, "timeout": 10}), &ans)
		for _, u := range ans.Result {
			offset = u.ID + 1
			post("sendMessage", map[string]any{"chat_id": u.Message.Chat.ID, "text": "ok"})
		}
	}
}

// BenchmarkGatewayTrueFloor is the least any gateway must do per message,
// against the same fakes: long-poll the Bot API, store the message durably
// (one SQLite insert, its own commit, WAL with synchronous=NORMAL as
// state.db), ask the model (the same loopback model, the message alone), send
// the answer; 32 messages at once, as the gateway's default
// max_concurrent_sessions. No history, no tools, no hooks, no ledger.
func BenchmarkGatewayTrueFloor(b *testing.B) {
	chats := benchChats()
	for range b.N {
		trueFloor(b, chats*benchRounds, false, func(tg *telegramfake.Server) { workload(b, tg, chats) })
	}
}

// BenchmarkGatewayRequiredFloor is the true floor plus what the issue asks of
// every gateway besides: the typing action while the model works, the
// conversation so far in the model request (it continues), the answer stored
// with its delivery record in one commit before it is sent (nothing said is
// lost, the ledger), and its sent mark after. Still no tools, hooks or plugins.
func BenchmarkGatewayRequiredFloor(b *testing.B) {
	chats := benchChats()
	for range b.N {
		trueFloor(b, chats*benchRounds, true, func(tg *telegramfake.Server) { workload(b, tg, chats) })
	}
}

// BenchmarkGatewayTrueFloorOverhead is the true floor's figure of the
// overhead run.
func BenchmarkGatewayTrueFloorOverhead(b *testing.B) {
	for range b.N {
		var model *llmtest.Server
		trueFloor(b, overheadChats*overheadRounds, false, func(tg *telegramfake.Server) { overhead(b, tg, model) }, &model)
	}
}

func trueFloor(b *testing.B, replies int, required bool, run func(*telegramfake.Server), expose ...**llmtest.Server) {
	b.Helper()
	tg := telegramfake.Start("1:tok")
	model := llmtest.NewServer(b)
	model.Lean()
	model.Enqueue(llmtest.Reply{Content: "ok", Repeat: replies})
	for _, p := range expose {
		*p = model
	}
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "floor.db")+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=10000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one writer: queued in Go, never in SQLite's busy handler
	if _, err := db.Exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY, chat INTEGER NOT NULL, text TEXT NOT NULL);
		CREATE INDEX messages_chat ON messages(chat);
		CREATE TABLE deliveries (id INTEGER PRIMARY KEY, chat INTEGER NOT NULL, text TEXT NOT NULL, sent INTEGER)`); err != nil {
		b.Fatal(err)
	}
	insert, err := db.Prepare(`INSERT INTO messages (chat, text) VALUES (?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer insert.Close()
	ctx, cancel := context.WithCancel(context.Background())
	type update struct {
		chat int64
		text string
	}
	work := make(chan update)
	done := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(url string, body any, out any) {
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
	}
	var workers sync.WaitGroup
	for range 32 {
		workers.Go(func() {
			for u := range work {
				if _, err := insert.ExecContext(ctx, u.chat, u.text); err != nil {
					continue
				}
				var ans struct {
					Choices []struct {
						Message struct {
							Content string `json:"content"`
						} `json:"message"`
					} `json:"choices"`
				}
				if !required {
					post(model.URL+"/chat/completions", map[string]any{"model": "fake",
						"messages": []map[string]string{{"role": "user", "content": u.text}}}, &ans)
					if len(ans.Choices) == 0 {
						continue
					}
					post(tg.URL+"/bot"+tg.Token+"/sendMessage", map[string]any{"chat_id": u.chat, "text": ans.Choices[0].Message.Content}, nil)
					continue
				}
				post(tg.URL+"/bot"+tg.Token+"/sendChatAction", map[string]any{"chat_id": u.chat, "action": "typing"}, nil)
				history := []map[string]string{}
				if rows, err := db.QueryContext(ctx, `SELECT text FROM messages WHERE chat = ? ORDER BY id`, u.chat); err == nil {
					for rows.Next() {
						var t string
						_ = rows.Scan(&t)
						history = append(history, map[string]string{"role": "user", "content": t})
					}
					rows.Close()
				}
				post(model.URL+"/chat/completions", map[string]any{"model": "fake", "messages": history}, &ans)
				if len(ans.Choices) == 0 {
					continue
				}
				answer := ans.Choices[0].Message.Content
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					continue
				}
				_, _ = tx.ExecContext(ctx, `INSERT INTO messages (chat, text) VALUES (?, ?)`, u.chat, answer)
				res, _ := tx.ExecContext(ctx, `INSERT INTO deliveries (chat, text) VALUES (?, ?)`, u.chat, answer)
				if tx.Commit() != nil {
					continue
				}
				post(tg.URL+"/bot"+tg.Token+"/sendMessage", map[string]any{"chat_id": u.chat, "text": answer}, nil)
				if id, err := res.LastInsertId(); err == nil {
					_, _ = db.ExecContext(ctx, `UPDATE deliveries SET sent = 1 WHERE id = ?`, id)
				}
			}
		})
	}
	go func() {
		defer close(done)
		defer close(work)
		offset := int64(0)
		for ctx.Err() == nil {
			var ans struct {
				Result []struct {
					ID      int64 `json:"update_id"`
					Message struct {
						Text string `json:"text"`
						Chat struct {
							ID int64 `json:"id"`
						} `json:"chat"`
					} `json:"message"`
				} `json:"result"`
			}
			post(tg.URL+"/bot"+tg.Token+"/getUpdates", map[string]any{"offset": offset, "timeout": 10}, &ans)
			for _, u := range ans.Result {
				offset = u.ID + 1
				select {
				case work <- update{u.Message.Chat.ID, u.Message.Text}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	run(tg)
	cancel()
	tg.Close()
	<-done
	workers.Wait()
}
