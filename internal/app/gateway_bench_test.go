package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
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

// workload sends one message from every chat, waits until all are answered,
// five times over, and reports messages/s and the latency from a message's
// arrival at the Bot API to its answer's sendMessage.
func workload(b *testing.B, tg *telegramfake.Server, chats int) {
	b.Helper()
	sentAt := map[string]time.Time{} // "chat/round" → pushed
	var lat []time.Duration
	base := len(tg.Calls("sendMessage"))
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
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(chats*benchRounds)/elapsed.Seconds(), "msgs/s")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkGateway1000Chats is the figure: 1,000 chats × 5 messages
// through the real gateway (Telegram adapter, runner, agent, state.db) with
// the instant loopback model. Latency includes the model's loopback call.
func BenchmarkGateway1000Chats(b *testing.B) {
	chats := benchChats()
	allow := make([]string, chats)
	for i := range allow {
		allow[i] = strconv.Itoa(i + 1)
	}
	for range b.N {
		g := startGateway(b, "display:\n  busy_input_mode: queue\n", "TELEGRAM_ALLOWED_USERS="+strings.Join(allow, ",")+"\n",
			llmtest.Reply{Content: "ok", Repeat: chats * benchRounds})
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

// BenchmarkGatewayFloor is the floor the gateway is measured against: a
// minimal loop that long-polls the same fake and answers each update with
// one sendMessage.
func BenchmarkGatewayFloor(b *testing.B) {
	chats := benchChats()
	for range b.N {
		tg := telegramfake.Start("1:tok")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			floorLoop(ctx, tg)
		}()
		workload(b, tg, chats)
		cancel()
		tg.Close()
		<-done
	}
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
