package discord

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// CatchUp is what a connection reads back after READY. Discord replays
// nothing across a fresh IDENTIFY, so messages written while no connection
// was up (a hand-over between the processes of a cluster) are found only by
// reading the channels over REST.
type CatchUp struct {
	Channels []CatchUpChannel
	// Since is the cursor: messages written after it are read (as the
	// snowflake of that millisecond), oldest first.
	Since time.Time
	// MaxPages bounds the pages of 100 messages read per channel (0: 1).
	MaxPages int
}

// CatchUpChannel is one channel to read back; GuildID is "" for a DM (REST
// messages carry no guild id, so the caller says which it is).
type CatchUpChannel struct{ ID, GuildID string }

// CatchUpStats is what a catch-up did.
type CatchUpStats struct {
	Channels  int // channels read
	Pages     int // GET /channels/{id}/messages answered
	Fetched   int // messages read
	Delivered int // handed to the gateway (past every filter and the dedupe)
	Failed    int // channels whose reading failed (gone, no access)
	Truncated int // channels with more than MaxPages pages after the cursor
}

// pageSize is Discord's most messages per GET .../messages.
const pageSize = 100

// discordEpoch is the millisecond Discord's snowflakes count from (2015-01-01).
const discordEpoch = 1420070400000

// snowflakeAt is the smallest id Discord gives a message written at t: the
// millisecond since its epoch in the bits above 22.
func snowflakeAt(t time.Time) string {
	return strconv.FormatUint(uint64(max(t.UnixMilli()-discordEpoch, 0))<<22, 10)
}

// idNumber is a snowflake as a number (0 for anything else).
func idNumber(id string) uint64 {
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}

// readyCatchUp runs the catch-up the CatchUp option asks for at a READY, in
// the worker: the messages read back reach h before the events that arrived
// after READY, as they would have on a connection that never broke.
func (a *Adapter) readyCatchUp(ctx context.Context, h platform.Handler) {
	if a.opts.CatchUp == nil {
		return
	}
	plan, ok := a.opts.CatchUp(ctx)
	if !ok {
		return
	}
	a.catchUp(ctx, h, plan)
}

// catchUp reads each channel's messages after plan.Since and handles each
// exactly as a MESSAGE_CREATE (the same filters; the bot's own and those
// already handled, here or, through Seen, elsewhere, are skipped).
func (a *Adapter) catchUp(ctx context.Context, h platform.Handler, plan CatchUp) CatchUpStats {
	var st CatchUpStats
	began := a.now()
	cursor := snowflakeAt(plan.Since)
	pages := max(plan.MaxPages, 1)
	members := map[string]*discordgo.Member{}
	for _, ch := range plan.Channels {
		if ctx.Err() != nil {
			break
		}
		if !numeric(ch.ID) || (ch.GuildID != "" && !numeric(ch.GuildID)) {
			continue
		}
		st.Channels++
		after, done := cursor, false
		for p := 0; p < pages && !done; p++ {
			page, err := a.history(ctx, ch.ID, after)
			if err != nil {
				st.Failed++
				a.log.Warn("discord: could not read a channel back after connecting", "channel", ch.ID, "err", errText(err))
				done = true
				break
			}
			st.Pages++
			// Discord returns newest first; handled oldest first.
			slices.SortFunc(page, func(x, y *discordgo.Message) int { return cmpID(x.ID, y.ID) })
			for _, m := range page {
				if m == nil {
					continue
				}
				st.Fetched++
				if cmpID(m.ID, after) > 0 {
					after = m.ID
				}
				if m.GuildID == "" {
					m.GuildID = ch.GuildID
				}
				if m.GuildID != "" && m.Member == nil && len(a.roles) > 0 && m.Author != nil {
					m.Member = a.member(ctx, m.GuildID, m.Author.ID, members)
				}
				if a.onMessage(ctx, h, m) {
					st.Delivered++
				}
			}
			done = len(page) < pageSize
		}
		if !done {
			st.Truncated++
			a.log.Warn("discord: a channel had more messages since the cursor than the catch-up reads; the newer ones are not answered",
				"channel", ch.ID, "pages", pages)
		}
	}
	a.log.Info("discord: caught up on messages written while no connection was up",
		"since", plan.Since.UTC().Format(time.RFC3339Nano), "channels", st.Channels, "pages", st.Pages, "fetched", st.Fetched,
		"delivered", st.Delivered, "failed", st.Failed, "truncated", st.Truncated, "took", a.now().Sub(began).Round(time.Millisecond))
	return st
}

// history is one page of a channel's messages after the id after.
func (a *Adapter) history(ctx context.Context, channel, after string) ([]*discordgo.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var page []*discordgo.Message
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		page, err = a.session.ChannelMessages(channel, pageSize, "", after, "", o...)
		return err
	})
	return page, err
}

// member is a guild member's roles (REST messages carry none), fetched once
// per author and catch-up; nil when Discord does not say.
func (a *Adapter) member(ctx context.Context, guild, user string, cache map[string]*discordgo.Member) *discordgo.Member {
	key := guild + "/" + user
	if m, ok := cache[key]; ok {
		return m
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var m *discordgo.Member
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		m, err = a.session.GuildMember(guild, user, o...)
		return err
	})
	if err != nil {
		a.log.Warn("discord: could not read a member's roles for a message read back; judged without them", "guild", guild, "user", user, "err", errText(err))
		m = nil
	}
	cache[key] = m
	return m
}

// cmpID orders snowflakes numerically (a longer id is a later one).
func cmpID(x, y string) int {
	nx, ny := idNumber(x), idNumber(y)
	switch {
	case nx < ny:
		return -1
	case nx > ny:
		return 1
	}
	return 0
}
