package discord

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"
)

// maxProspects bounds the auto-threads remembered; past it the oldest is
// forgotten (by then long answered, or never to be).
const maxProspects = 4096

// prospect is an auto-thread not opened yet. A mention in a text channel is
// answered in a thread whose id is the message's (Discord gives a thread
// started on a message that message's id), so the session is keyed on it at
// once (Source.ProspectiveThreadID) but the thread is opened only when the
// gateway first types or sends there: after authorisation and the
// pre_gateway_dispatch hooks, so a stranger's mention opens nothing.
type prospect struct {
	ch      chan struct{} // a one-slot lock: held while the thread is being opened
	channel string        // the text channel the message is in
	name    string
	opened  bool
	target  string // where answers go once opened: the thread, or the channel if Discord refused
}

// canThread reports whether a channel's messages can start threads (text
// and announcement channels; an unknown channel is tried as text).
func canThread(c channelInfo) bool {
	return c.kind == discordgo.ChannelTypeGuildText || c.kind == discordgo.ChannelTypeGuildNews
}

// expectThread notes that an answer to messageID opens a thread named name.
func (a *Adapter) expectThread(channelID, messageID, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[messageID]; ok {
		return
	}
	a.pending[messageID] = &prospect{ch: make(chan struct{}, 1), channel: channelID, name: name}
	a.order = append(a.order, messageID)
	if len(a.order) > maxProspects {
		delete(a.pending, a.order[0])
		a.order = a.order[1:]
	}
}

// forgetThread drops the auto-thread expected for messageID unless it is
// open already: the message was not taken (a duplicate another process has
// answered, whose thread may exist), so an answer here must not try to open
// it again.
func (a *Adapter) forgetThread(messageID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pending[messageID]; ok && !p.opened {
		delete(a.pending, messageID)
	}
}

// target is where a message for threadID goes: threadID itself, unless it is
// a prospective thread, which is opened first (once, however many sends and
// typing actions race for it). A thread Discord refuses leaves the answers in
// the channel.
func (a *Adapter) target(ctx context.Context, threadID string) string {
	a.mu.Lock()
	p := a.pending[threadID]
	a.mu.Unlock()
	if p == nil {
		return threadID
	}
	select {
	case p.ch <- struct{}{}:
	case <-ctx.Done():
		return p.channel
	}
	defer func() { <-p.ch }()
	if !p.opened {
		p.opened, p.target = true, p.channel
		if a.openThread(ctx, p.channel, threadID, p.name) {
			p.target = threadID
		}
	}
	return p.target
}

// openThread starts a thread on messageID in channelID; false when Discord
// refused (the channel cannot have threads, the bot may not open them).
func (a *Adapter) openThread(ctx context.Context, channelID, messageID, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var th *discordgo.Channel
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		th, err = a.session.MessageThreadStartComplex(channelID, messageID, &discordgo.ThreadStart{Name: name, AutoArchiveDuration: 1440}, o...)
		return err
	})
	if err != nil || th == nil || th.ID == "" {
		a.log.Warn("discord: could not open a thread; answering in the channel", "channel", channelID, "err", errText(err))
		return false
	}
	if th.ID != messageID {
		// Not what Discord documents; the session is keyed on messageID.
		a.log.Warn("discord: the new thread's id is not its message's; answering in the channel", "thread", th.ID, "message", messageID)
		return false
	}
	if th.ParentID == "" {
		th.ParentID = channelID
	}
	a.learn(th)
	a.mu.Lock()
	a.botOwned[th.ID] = true
	a.mu.Unlock()
	return true
}
