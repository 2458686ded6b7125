package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/testutil/telegramfake"
)

// The telegramfake script command runs a loopback Telegram Bot API server so
// `hermes gateway run` can be tested end to end:
//
//	telegramfake start                     # token "123:fake"; sets $TELEGRAM_FAKE_URL and $TELEGRAM_FAKE_TOKEN
//	telegramfake send CHAT USER TEXT...    # a private message from USER in CHAT (group: CHAT < 0)
//	telegramfake wait METHOD N [TIMEOUT]   # until N successful METHOD calls (default 30s)
//	telegramfake sent METHOD               # those calls' parameters, one JSON object a line
//	telegramfake count METHOD N            # exactly N successful calls so far
//	telegramfake pollers                   # "polling=N max=M": getUpdates waiting now, and the most at once
//	telegramfake fail METHOD CODE [N] [RETRY_AFTER]   # the next N (1) calls answer CODE
//	telegramfake raw ID JSON               # an update as given (malformed ones too)
//	telegramfake edit CHAT USER MSG TEXT...   # USER edited message MSG
//	telegramfake press CHAT USER LABEL     # USER pressed the button LABEL of the newest message to CHAT with one
//
// config.yaml then says platforms.telegram.extra.base_url: ${TELEGRAM_FAKE_URL}.
func init() {
	scriptCmds["telegramfake"] = cmdTelegramFake
}

var (
	tgMu    sync.Mutex
	tgFakes = map[*testscript.TestScript]*telegramfake.Server{}
)

func cmdTelegramFake(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: telegramfake start | send | wait | sent | count | fail | raw")
	}
	tgMu.Lock()
	srv := tgFakes[ts]
	tgMu.Unlock()
	if args[0] != "start" && srv == nil {
		ts.Fatalf("telegramfake %s: no server; run telegramfake start first", args[0])
	}
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			ts.Fatalf("telegramfake: %q is not a number", s)
		}
		return n
	}
	switch args[0] {
	case "start":
		if srv != nil {
			ts.Fatalf("telegramfake start: already running")
		}
		s := telegramfake.Start("123:fake")
		tgMu.Lock()
		tgFakes[ts] = s
		tgMu.Unlock()
		ts.Setenv("TELEGRAM_FAKE_URL", s.URL)
		ts.Setenv("TELEGRAM_FAKE_TOKEN", s.Token)
		ts.Defer(func() {
			tgMu.Lock()
			delete(tgFakes, ts)
			tgMu.Unlock()
			s.Close()
		})
	case "send":
		if len(args) < 4 {
			ts.Fatalf("usage: telegramfake send CHAT USER TEXT...")
		}
		chat, user := int64(num(args[1])), int64(num(args[2]))
		text := args[3]
		for _, a := range args[4:] {
			text += " " + a
		}
		m := telegramfake.Message{ChatID: chat, UserID: user, Text: text}
		if chat < 0 {
			m.ChatType = "supergroup"
		}
		srv.PushText(m)
	case "edit":
		// edit CHAT USER MESSAGE_ID TEXT...: the user edited an earlier message.
		if len(args) < 5 {
			ts.Fatalf("usage: telegramfake edit CHAT USER MESSAGE_ID TEXT...")
		}
		srv.PushUpdate(map[string]any{"edited_message": map[string]any{
			"message_id": num(args[3]), "date": time.Now().Unix(), "edit_date": time.Now().Unix(), "text": strings.Join(args[4:], " "),
			"chat": map[string]any{"id": num(args[1]), "type": "private"}, "from": map[string]any{"id": num(args[2]), "first_name": "u"},
		}})
	case "press":
		// press CHAT USER LABEL: the button labelled LABEL on the newest message to CHAT that has it.
		if len(args) < 4 {
			ts.Fatalf("usage: telegramfake press CHAT USER LABEL...")
		}
		label := strings.Join(args[3:], " ")
		calls := srv.Calls("sendMessage")
		for i := len(calls) - 1; i >= 0; i-- {
			c := calls[i]
			if c.Status != 200 || c.Params["chat_id"] != args[1] {
				continue
			}
			var markup struct {
				Rows [][]struct {
					Text string `json:"text"`
					Data string `json:"callback_data"`
				} `json:"inline_keyboard"`
			}
			_ = json.Unmarshal([]byte(c.Params["reply_markup"]), &markup)
			for _, row := range markup.Rows {
				for _, b := range row {
					if b.Text == label {
						srv.PushCallback(int64(num(args[1])), int64(num(args[2])), c.MessageID, b.Data)
						return
					}
				}
			}
		}
		ts.Fatalf("telegramfake press: no message to %s has a button %q", args[1], label)
	case "raw":
		if len(args) != 3 {
			ts.Fatalf("usage: telegramfake raw ID JSON")
		}
		srv.PushRaw(int64(num(args[1])), args[2])
	case "wait":
		if len(args) < 3 {
			ts.Fatalf("usage: telegramfake wait METHOD N [TIMEOUT]")
		}
		timeout := 30 * time.Second
		if len(args) == 4 {
			d, err := time.ParseDuration(args[3])
			ts.Check(err)
			timeout = d
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := srv.WaitCalls(ctx, args[1], num(args[2]))
		if (err == nil) == neg {
			ts.Fatalf("telegramfake wait %s %s: %v", args[1], args[2], err)
		}
	case "sent":
		if len(args) != 2 {
			ts.Fatalf("usage: telegramfake sent METHOD")
		}
		for _, c := range srv.Calls(args[1]) {
			if c.Status != 200 {
				continue
			}
			b, err := json.Marshal(c.Params)
			ts.Check(err)
			fmt.Fprintf(ts.Stdout(), "%s\n", b)
		}
	case "pollers":
		now, most := srv.Pollers()
		fmt.Fprintf(ts.Stdout(), "polling=%d max=%d\n", now, most)
	case "count":
		if len(args) != 3 {
			ts.Fatalf("usage: telegramfake count METHOD N")
		}
		got := 0
		for _, c := range srv.Calls(args[1]) {
			if c.Status == 200 {
				got++
			}
		}
		if (got == num(args[2])) == neg {
			ts.Fatalf("telegramfake: %d successful %s calls, want %s%s", got, args[1], map[bool]string{true: "not "}[neg], args[2])
		}
	case "fail":
		if len(args) < 3 {
			ts.Fatalf("usage: telegramfake fail METHOD CODE [N] [RETRY_AFTER]")
		}
		n, retry := 1, 0
		if len(args) > 3 {
			n = num(args[3])
		}
		if len(args) > 4 {
			retry = num(args[4])
		}
		code := num(args[2])
		desc := map[int]string{429: "Too Many Requests: retry after " + strconv.Itoa(retry), 409: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
			400: "Bad Request", 500: "Internal Server Error"}[code]
		srv.Fail(args[1], n, telegramfake.Failure{Code: code, Description: desc, RetryAfter: retry})
	default:
		ts.Fatalf("telegramfake: unknown subcommand %q", args[0])
	}
}

// gwsignal SIGNAL sends SIGNAL (TERM, INT, KILL) to the gateway whose pid is
// in $HERMES_HOME/gateway.pid (testscript's kill knows only INT and KILL).
func init() {
	scriptCmds["gwsignal"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: gwsignal TERM|INT|KILL")
		}
		sig, ok := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL}[args[0]]
		if !ok {
			ts.Fatalf("gwsignal: unknown signal %q", args[0])
		}
		b, err := os.ReadFile(filepath.Join(ts.Getenv("HERMES_HOME"), "gateway.pid"))
		ts.Check(err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			ts.Fatalf("gwsignal: gateway.pid holds %q, not a pid", b)
		}
		ts.Check(syscall.Kill(pid, sig))
	}
}

// exitcode CODE PROG ARGS... runs PROG (found on the script's PATH) and
// checks its exit code; its stdout and stderr are the script's, as exec's.
func init() {
	scriptCmds["exitcode"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: exitcode CODE PROG [ARGS...]")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		prog := args[1]
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if p := filepath.Join(dir, prog); fileExecutable(p) {
				prog = p
				break
			}
		}
		cmd := exec.Command(prog, args[2:]...)
		cmd.Dir = ts.Getenv("WORK")
		cmd.Env = scriptEnviron(ts)
		cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
		err = cmd.Run()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("exitcode: %v", err)
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", args[1], got, want)
		}
	}
}

func fileExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// scriptEnviron is the script's environment for a process it starts.
func scriptEnviron(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "HERMES_HOME", "WORK", "TMPDIR", "HERMES_OFFLINE", "PYENV_ROOT", "XDG_CONFIG_HOME",
		"TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_URL", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_FAKE_URL", "DISCORD_BOT_TOKEN", "DISCORD_FAKE_URL", "FAKELLM_URL", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// waitlog REGEXP waits (up to 30 s) until $HERMES_HOME/logs/gateway.log has
// a line matching REGEXP.
func init() {
	scriptCmds["waitlog"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: waitlog REGEXP")
		}
		re, err := regexp.Compile(args[0])
		ts.Check(err)
		path := filepath.Join(ts.Getenv("HERMES_HOME"), "logs", "gateway.log")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(path); err == nil && re.Match(b) {
				return
			}
		}
		ts.Fatalf("waitlog: no line matching %q in %s", args[0], path)
	}
}
