package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/testutil/discordfake"
)

// The discordfake script command runs a loopback Discord (REST and the
// gateway websocket) so `hermes gateway run` can be tested end to end:
//
//	discordfake start                         # sets $DISCORD_FAKE_URL and $DISCORD_FAKE_TOKEN; guild $DISCORD_GUILD
//	                                          # with the text channel $DISCORD_GENERAL
//	discordfake dm CHANNEL USER TEXT...       # USER writes in their DM channel CHANNEL
//	discordfake say CHANNEL USER TEXT...      # USER writes in guild channel (or thread) CHANNEL; "@bot" mentions the bot
//	                                          # (both set $DISCORD_MSG to the new message's id)
//	discordfake wait WHAT N [TIMEOUT]         # until N of WHAT (messages, edits, threads, callbacks, identifies,
//	                                          # resumes, typing, live, reactions) (default 30s); ! = not within the time
//	discordfake sent                          # the bot's messages, one JSON object a line
//	discordfake threads                       # the threads it opened, one JSON object a line
//	discordfake press CHANNEL USER LABEL...   # USER presses the button LABEL of the newest bot message in CHANNEL with one
//	discordfake drop                          # the connection drops (no close frame); the bot must RESUME
//	discordfake live                          # "live=N max=M": identified connections open now, and the most at once
//	discordfake offline [TIMEOUT]             # until no connection is open
//	discordfake dm-offline|say-offline CHANNEL USER TEXT... # dm or say while no connection is open (fails otherwise):
//	                                          # only reading the channel finds it; sets $DISCORD_MSG
//	discordfake replies MSGID                 # how many of the bot's messages reply to MSGID
//
// config.yaml then says platforms.discord.extra.base_url: ${DISCORD_FAKE_URL}.
func init() {
	scriptCmds["discordfake"] = cmdDiscordFake
}

// The fake's world.
const (
	dfGuild   = "500000000000000001"
	dfGeneral = "500000000000000010"
)

type dfState struct {
	s      *discordfake.Server
	mu     sync.Mutex
	failed string // the fake's last complaint (a Wait that timed out)
}

var (
	dfMu    sync.Mutex
	dfFakes = map[*testscript.TestScript]*dfState{}
)

func cmdDiscordFake(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: discordfake start | dm | say | wait | sent | threads | press | drop")
	}
	dfMu.Lock()
	st := dfFakes[ts]
	dfMu.Unlock()
	if args[0] != "start" && st == nil {
		ts.Fatalf("discordfake %s: no server; run discordfake start first", args[0])
	}
	if neg && args[0] != "wait" {
		ts.Fatalf("discordfake %s does not take !", args[0])
	}
	switch args[0] {
	case "start":
		if st != nil {
			ts.Fatalf("discordfake start: already running")
		}
		st = &dfState{}
		st.s = discordfake.Start(func(format string, a ...any) {
			st.mu.Lock()
			st.failed = fmt.Sprintf(format, a...)
			st.mu.Unlock()
		})
		st.s.AddChannel(discordfake.Channel{ID: dfGeneral, Type: discordfake.ChannelGuildText, GuildID: dfGuild, Name: "general"})
		dfMu.Lock()
		dfFakes[ts] = st
		dfMu.Unlock()
		ts.Setenv("DISCORD_FAKE_URL", st.s.URL())
		ts.Setenv("DISCORD_FAKE_TOKEN", discordfake.Token)
		ts.Setenv("DISCORD_GUILD", dfGuild)
		ts.Setenv("DISCORD_GENERAL", dfGeneral)
		ts.Setenv("DISCORD_BOT_ID", discordfake.BotID)
		ts.Defer(func() {
			dfMu.Lock()
			delete(dfFakes, ts)
			dfMu.Unlock()
			st.s.Close()
		})
	case "dm", "say", "dm-offline", "say-offline":
		if len(args) < 4 {
			ts.Fatalf("usage: discordfake %s CHANNEL USER TEXT...", args[0])
		}
		m := discordfake.MessageIn{ChannelID: args[1], Author: discordfake.Author{ID: args[2], Name: "user" + args[2]}, Content: strings.Join(args[3:], " ")}
		if strings.HasPrefix(args[0], "dm") {
			known := false
			st.s.Snapshot(func(v discordfake.View) { _, known = v.Channel(m.ChannelID) })
			if !known {
				st.s.AddChannel(discordfake.Channel{ID: m.ChannelID, Type: discordfake.ChannelDM})
			}
		} else {
			m.GuildID = dfGuild
			if strings.Contains(m.Content, "@bot") {
				m.Content = strings.ReplaceAll(m.Content, "@bot", "<@"+discordfake.BotID+">")
				m.Mentions = []string{discordfake.BotID}
			}
		}
		if strings.HasSuffix(args[0], "-offline") {
			id, ok := st.s.PostOffline(m)
			if !ok {
				ts.Fatalf("discordfake %s: a bot is connected", args[0])
			}
			ts.Setenv("DISCORD_MSG", id)
			return
		}
		ts.Setenv("DISCORD_MSG", st.s.MessageCreate(m))
	case "wait":
		if len(args) < 3 {
			ts.Fatalf("usage: discordfake wait WHAT N [TIMEOUT]")
		}
		n, err := strconv.Atoi(args[2])
		if err != nil {
			ts.Fatalf("discordfake wait: %q is not a number", args[2])
		}
		timeout := 30 * time.Second
		if len(args) == 4 {
			timeout, err = time.ParseDuration(args[3])
			ts.Check(err)
		}
		count := dfCounter(ts, args[1])
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		st.s.Wait(ctx, args[1], func(v discordfake.View) bool { return count(v) >= n })
		var got int
		st.s.Snapshot(func(v discordfake.View) { got = count(v) })
		if (got >= n) == neg {
			ts.Fatalf("discordfake wait %s %d: %d so far", args[1], n, got)
		}
	case "sent":
		st.s.Snapshot(func(v discordfake.View) {
			for _, m := range v.Messages() {
				dfPrint(ts, map[string]any{"channel_id": m.ChannelID, "content": m.Content, "reply_to": m.ReplyTo,
					"buttons": m.Labels, "edited": m.Edited, "no_mentions": m.NoMentions})
			}
		})
	case "threads":
		st.s.Snapshot(func(v discordfake.View) {
			for _, th := range v.Threads() {
				dfPrint(ts, map[string]any{"channel_id": th.ChannelID, "message_id": th.MessageID, "name": th.Name, "auto_archive": th.AutoArchive})
			}
		})
	case "press":
		if len(args) < 4 {
			ts.Fatalf("usage: discordfake press CHANNEL USER LABEL...")
		}
		label := strings.Join(args[3:], " ")
		var msgID, custom string
		st.s.Snapshot(func(v discordfake.View) {
			ms := v.Messages()
			for i := len(ms) - 1; i >= 0 && msgID == ""; i-- {
				if ms[i].ChannelID != args[1] {
					continue
				}
				for j, l := range ms[i].Labels {
					if l == label {
						msgID, custom = ms[i].ID, ms[i].Buttons[j]
					}
				}
			}
		})
		if msgID == "" {
			ts.Fatalf("discordfake press: no bot message in %s has a button %q", args[1], label)
		}
		guild := ""
		st.s.Snapshot(func(v discordfake.View) {
			if c, ok := v.Channel(args[1]); ok {
				guild = c.GuildID
			}
		})
		st.s.ButtonPress(args[1], guild, discordfake.Author{ID: args[2], Name: "user" + args[2]}, msgID, custom)
	case "offline":
		timeout := 30 * time.Second
		if len(args) == 2 {
			var err error
			timeout, err = time.ParseDuration(args[1])
			ts.Check(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		st.s.Wait(ctx, "no connection", func(v discordfake.View) bool { return v.Live() == 0 && !v.Connected() })
		st.mu.Lock()
		failed := st.failed
		st.mu.Unlock()
		if failed != "" {
			ts.Fatalf("%s", failed)
		}
	case "replies":
		if len(args) != 2 {
			ts.Fatalf("usage: discordfake replies MSGID")
		}
		st.s.Snapshot(func(v discordfake.View) { fmt.Fprintf(ts.Stdout(), "%d\n", v.Replies(args[1])) })
	case "drop":
		st.s.Disconnect()
	case "live":
		st.s.Snapshot(func(v discordfake.View) { fmt.Fprintf(ts.Stdout(), "live=%d max=%d\n", v.Live(), v.MaxLive()) })
	default:
		ts.Fatalf("discordfake: unknown subcommand %q", args[0])
	}
}

// dfPrint writes v as one JSON line, <, > and & as they are (readable patterns).
func dfPrint(ts *testscript.TestScript, v any) {
	enc := json.NewEncoder(ts.Stdout())
	enc.SetEscapeHTML(false)
	ts.Check(enc.Encode(v))
}

// dfCounter is how discordfake wait counts WHAT.
func dfCounter(ts *testscript.TestScript, what string) func(discordfake.View) int {
	switch what {
	case "messages":
		return func(v discordfake.View) int { return len(v.Messages()) }
	case "edits":
		return func(v discordfake.View) int {
			n := 0
			for _, m := range v.Messages() {
				if m.Edited {
					n++
				}
			}
			return n
		}
	case "threads":
		return func(v discordfake.View) int { return len(v.Threads()) }
	case "callbacks":
		return func(v discordfake.View) int { return len(v.Callbacks()) }
	case "identifies":
		return func(v discordfake.View) int { return v.Identifies() }
	case "resumes":
		return func(v discordfake.View) int { return v.Resumes() }
	case "typing":
		return func(v discordfake.View) int { return len(v.Typing()) }
	case "live":
		return func(v discordfake.View) int { return v.Live() }
	case "reactions":
		return func(v discordfake.View) int { return len(v.Reactions()) }
	}
	ts.Fatalf("discordfake wait: unknown %q (messages, edits, threads, callbacks, identifies, resumes, typing)", what)
	return nil
}
