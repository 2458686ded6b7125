package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/cluster"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/session"
)

// The Discord catch-up of a cluster (issue 19): Discord replays nothing
// across a fresh IDENTIFY, so the process that gains the connection reads
// back, over REST, the channels of recently active Discord sessions from
// just before its predecessor was last known to hold the connection, and
// the adapter handles each message it finds as a MESSAGE_CREATE. Every
// message a process of the cluster accepts is marked in cluster_seen first,
// so one the old owner handled is not answered again. docs/SCALING.md has
// the reasoning.

const (
	// defaultDiscordCatchUp is gateway.cluster.discord_catchup's default:
	// the channels of sessions active within it are read back.
	defaultDiscordCatchUp = 24 * time.Hour
	// catchUpMargin is read back before the predecessor's last sign of life:
	// its heartbeat interval, the shutdown of its socket, and the skew
	// between the database's clock and Discord's.
	catchUpMargin = 30 * time.Second
	// catchUpChannels and catchUpPages bound the work of one catch-up: at
	// most channels × pages GETs of 100 messages.
	catchUpChannels = 100
	catchUpPages    = 5
)

// discordCatchUpWindow reads gateway.cluster.discord_catchup: a duration
// (or seconds); 0 or false turns the catch-up off. It is capped by how long
// cluster_seen remembers message ids, past which the dedupe could not tell.
func discordCatchUpWindow(cfg map[string]any) (time.Duration, error) {
	v, ok := valueAt(cfg, "gateway", "cluster", "discord_catchup")
	if !ok || v == nil {
		return defaultDiscordCatchUp, nil
	}
	if b, isBool := v.(bool); isBool {
		if b {
			return defaultDiscordCatchUp, nil
		}
		return 0, nil
	}
	if b, isBool := config.Bool(v); isBool && !b {
		return 0, nil
	}
	d, err := settingDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("gateway.cluster.discord_catchup in config.yaml is %v: write how far back to look for active Discord channels, such as 24h (0 or false: no catch-up)", v)
	}
	return min(d, cluster.DefaultSeenRetention), nil
}

// discordCatchUp arms a catch-up when this process gains the Discord
// connection and hands it to the adapter at the READY that follows.
type discordCatchUp struct {
	window     time.Duration
	node       *cluster.Node
	electRetry time.Duration
	log        *slog.Logger
	// keys lists recently active sessions (the store's ActiveKeys); set once
	// the store is open.
	keys func(ctx context.Context, since time.Time) ([]session.KeyEntry, error)

	mu    sync.Mutex
	armed bool
	since time.Time // the cursor, on the database's clock
	floor time.Time // sessions active since then are read back
}

// gained computes the cursor at the moment of the takeover, before the
// connection is made: the predecessor's last heartbeat when its row still
// says it led (it died), else the takeover less the election's retry (it
// stepped down, unlocking just after closing its socket); less the margin,
// and never before the window.
func (c *discordCatchUp) gained(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	now, held, err := c.node.LastHeld(qctx, roleDiscord)
	cancel()
	if err != nil {
		c.log.Warn("gateway: cannot tell when Discord's connection was last up; messages written during the hand-over are not read back", "error", err)
		return
	}
	since := now.Add(-c.electRetry)
	if !held.IsZero() && held.Before(since) {
		since = held
	}
	floor := now.Add(-c.window)
	since = since.Add(-catchUpMargin)
	if since.Before(floor) {
		since = floor
	}
	c.mu.Lock()
	c.armed, c.since, c.floor = true, since, floor
	c.mu.Unlock()
}

// plan is the adapter's CatchUp option: at the first READY after a takeover,
// the channels of the Discord sessions active within the window, the most
// recently active first.
func (c *discordCatchUp) plan(ctx context.Context) (discord.CatchUp, bool) {
	c.mu.Lock()
	armed, since, floor := c.armed, c.since, c.floor
	c.armed = false
	c.mu.Unlock()
	if !armed || c.keys == nil {
		return discord.CatchUp{}, false
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	entries, err := c.keys(qctx, floor)
	cancel()
	if err != nil {
		c.log.Warn("gateway: cannot list the active Discord sessions; messages written during the hand-over are not read back", "error", err)
		return discord.CatchUp{}, false
	}
	channels := catchUpChannelsOf(entries, catchUpChannels)
	c.log.Info("gateway: reading Discord channels back after taking over the connection",
		"channels", len(channels), "since", since.UTC().Format(time.RFC3339Nano), "sessions", len(entries))
	return discord.CatchUp{Channels: channels, Since: since, MaxPages: catchUpPages}, len(channels) > 0
}

// catchUpChannelsOf is the channels the sessions' routes name, each once, in
// order, at most limit: a DM's channel; a guild channel; a thread and its
// parent (a new mention there opens the next thread).
func catchUpChannelsOf(entries []session.KeyEntry, limit int) []discord.CatchUpChannel {
	var out []discord.CatchUpChannel
	seen := map[string]bool{}
	add := func(id, guild string) {
		if id == "" || seen[id] || len(out) >= limit {
			return
		}
		seen[id] = true
		out = append(out, discord.CatchUpChannel{ID: id, GuildID: guild})
	}
	for _, e := range entries {
		var src platform.Source
		if json.Unmarshal([]byte(e.Origin), &src) != nil || src.Platform != discord.Name {
			continue
		}
		guild := src.ScopeID
		if src.ChatType == platform.ChatDM {
			guild = ""
		}
		add(src.ThreadID, guild)
		add(src.ChatID, guild)
	}
	return out
}
