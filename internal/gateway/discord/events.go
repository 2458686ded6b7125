package discord

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// maxInbound caps the text of one inbound message (Discord's own cap is
// 4000 characters; anything longer is not from Discord as documented).
const maxInbound = 8000

// channelInfo is what the adapter knows of a channel.
type channelInfo struct {
	id, guild, parent, name string
	kind                    discordgo.ChannelType
	known                   bool // fetched or seen in an event, not guessed
}

func (c channelInfo) thread() bool {
	switch c.kind {
	case discordgo.ChannelTypeGuildPublicThread, discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread:
		return true
	}
	return false
}

func infoOf(c *discordgo.Channel) channelInfo {
	return channelInfo{id: c.ID, guild: c.GuildID, parent: c.ParentID, name: c.Name, kind: c.Type, known: true}
}

// addHandlers registers the discordgo handlers. They run in discordgo's
// websocket reader (SyncEvents), in order, so they only record state and
// enqueue; the worker does the rest.
func (a *Adapter) addHandlers() {
	s := a.session
	s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		if r.User != nil {
			a.botID.Store(r.User.ID)
		}
		a.connected.Store(true)
		a.enqueue(r)
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { a.connected.Store(true) })
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		a.connected.Store(false)
		select {
		case a.down <- struct{}{}:
		default:
		}
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageUpdate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageDelete) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadCreate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadUpdate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.GuildCreate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ChannelCreate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ChannelUpdate) { a.enqueue(e) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.InteractionCreate) { a.enqueue(e) })
}

// enqueue hands an event to the worker; it waits while the worker is busy
// (back-pressure on the websocket) but never past the end of Run.
func (a *Adapter) enqueue(e any) {
	a.mu.Lock()
	quit := a.quit
	a.mu.Unlock()
	select {
	case a.events <- e:
	case <-quit:
	}
}

// work turns queued discordgo events into platform events, one at a time so
// a channel's messages reach h in the order Discord sent them.
func (a *Adapter) work(ctx context.Context, h platform.Handler) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-a.events:
			a.handle(ctx, h, e)
		}
	}
}

func (a *Adapter) handle(ctx context.Context, h platform.Handler, e any) {
	defer func() {
		// A payload discordgo half-decoded must not take the gateway down.
		if r := recover(); r != nil {
			a.log.Error("discord: dropped an event that could not be handled", "event", termsafe.Line(typeName(e)), "panic", termsafe.Line(toString(r)))
		}
	}()
	switch e := e.(type) {
	case *discordgo.Ready:
		for _, g := range e.Guilds {
			a.learnGuild(g)
		}
		a.readyCatchUp(ctx, h)
	case *discordgo.GuildCreate:
		a.learnGuild(e.Guild)
	case *discordgo.ChannelCreate:
		a.learn(e.Channel)
	case *discordgo.ChannelUpdate:
		a.learn(e.Channel)
	case *discordgo.MessageCreate:
		a.onMessage(ctx, h, e.Message)
	case *discordgo.MessageUpdate:
		a.onEdit(ctx, h, e.Message)
	case *discordgo.MessageDelete:
		a.onDelete(ctx, h, e.Message)
	case *discordgo.ThreadCreate:
		a.onThreadCreate(ctx, h, e.Channel)
	case *discordgo.ThreadUpdate:
		a.onThreadUpdate(ctx, h, e.Channel)
	case *discordgo.InteractionCreate:
		a.onInteraction(ctx, h, e.Interaction)
	}
}

func (a *Adapter) learnGuild(g *discordgo.Guild) {
	if g == nil {
		return
	}
	for _, c := range g.Channels {
		if c != nil && c.GuildID == "" {
			c.GuildID = g.ID
		}
		a.learn(c)
	}
	for _, c := range g.Threads {
		a.learn(c)
	}
}

func (a *Adapter) learn(c *discordgo.Channel) {
	if c == nil || !numeric(c.ID) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.channels[c.ID] = infoOf(c)
}

// channel is what the adapter knows of id, asking Discord when it does not.
func (a *Adapter) channel(ctx context.Context, id string) channelInfo {
	a.mu.Lock()
	c, ok := a.channels[id]
	a.mu.Unlock()
	if ok {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var ch *discordgo.Channel
	err := a.withRetry(ctx, func(o ...discordgo.RequestOption) (err error) {
		ch, err = a.session.Channel(id, o...)
		return err
	})
	if err != nil || ch == nil {
		a.log.Warn("discord: could not look up a channel; treating it as a text channel", "channel", id, "err", errText(err))
		return channelInfo{id: id}
	}
	a.learn(ch)
	return infoOf(ch)
}

func (a *Adapter) bot() string {
	id, _ := a.botID.Load().(string)
	return id
}

// firstTime reports whether id was not delivered before (a RESUME may replay
// what the bot already had), and remembers it.
func (a *Adapter) firstTime(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.seen.get(id); dup {
		return false
	}
	a.seen.put(id, "")
	return true
}

// source is where a message in channelID came from: a DM, a guild channel
// (group) or a thread (its own session: chat = the parent, thread = itself).
func (a *Adapter) source(ctx context.Context, channelID, guildID string) (platform.Source, channelInfo) {
	src := platform.Source{Platform: Name, ScopeID: guildID}
	if guildID == "" {
		src.ChatType, src.ChatID = platform.ChatDM, channelID
		return src, channelInfo{id: channelID, kind: discordgo.ChannelTypeDM}
	}
	ch := a.channel(ctx, channelID)
	src.ChatName = ch.name
	if ch.thread() {
		src.ChatType, src.ChatID, src.ThreadID = platform.ChatThread, ch.parent, channelID
		if src.ChatID == "" {
			src.ChatID = channelID
		}
		return src, ch
	}
	src.ChatType, src.ChatID = platform.ChatGroup, channelID
	return src, ch
}

func (a *Adapter) withUser(src *platform.Source, u *discordgo.User) {
	if u == nil {
		return
	}
	src.UserID, src.IsBot = u.ID, u.Bot
	src.UserName = u.GlobalName
	if src.UserName == "" {
		src.UserName = u.Username
	}
}

// onMessage delivers a message (from MESSAGE_CREATE or read back by a
// catch-up) that passes the filters; true when it was delivered.
func (a *Adapter) onMessage(ctx context.Context, h platform.Handler, m *discordgo.Message) bool {
	if !wellFormed(m) || m.Author == nil || !numeric(m.Author.ID) {
		a.log.Warn("discord: dropped a malformed MESSAGE_CREATE")
		return false
	}
	bot := a.bot()
	if m.Author.ID == bot || !a.firstTime(m.ID) {
		return false
	}
	mentioned := mentionsBot(m, bot)
	if m.Author.Bot && (a.opts.AllowBots == BotsNone || (a.opts.AllowBots == BotsMentions && !mentioned)) {
		return false
	}
	a.remember(m.ID, m.ChannelID)
	src, ch := a.source(ctx, m.ChannelID, m.GuildID)
	if m.GuildID != "" && !a.channelAllowed(ch) {
		return false
	}
	a.withUser(&src, m.Author)
	text := cleanText(m.Content, bot)
	thread := false
	if m.GuildID != "" {
		src.RoleAuthorized = m.Member != nil && a.anyRole(m.Member.Roles)
		a.mu.Lock()
		// A text channel's parent is its category: only a thread inherits.
		answerFree := a.free[m.ChannelID] || (ch.thread() && (a.free[ch.parent] || a.botOwned[ch.id]))
		a.mu.Unlock()
		if a.opts.RequireMention && !mentioned && !answerFree {
			return false
		}
		thread = mentioned && a.opts.AutoThread && canThread(ch) && !a.noThread[m.ChannelID]
	}
	if a.opts.Accept == nil && !a.fresh(ctx, m.ID) {
		return false
	}
	if thread {
		// The thread is opened when the first answer goes out (see
		// expectThread): a message the gateway drops opens none.
		a.expectThread(m.ChannelID, m.ID, ThreadName(text))
		src.ProspectiveThreadID, src.ThreadID = m.ID, m.ID
	}
	ev := platform.Event{Kind: platform.EventMessage, Source: src, Text: text, MessageID: m.ID, Mentioned: mentioned, Time: a.when(m.Timestamp)}
	if m.MessageReference != nil {
		ev.ReplyTo = m.MessageReference.MessageID
	}
	if a.opts.Accept != nil {
		switch a.accept(ctx, ev) {
		case Duplicate:
			if thread {
				a.forgetThread(m.ID)
			}
			return false
		case Queued:
			return true
		}
		if !a.fresh(ctx, m.ID) { // Local: as without Accept
			if thread {
				a.forgetThread(m.ID)
			}
			return false
		}
	}
	h(ctx, ev)
	return true
}

// accept hands ev to the Accept option, retrying while it fails (the
// database away) with a back-off up to acceptBackoffMax. It runs in the
// event worker, so the events behind it wait: a conversation's messages
// stay in order, and the websocket is back-pressured rather than its events
// dropped. It gives up only when ctx ends (the connection is being closed:
// this process no longer owns it); the message is then lost here, and the
// next owner's catch-up reads its channel back.
func (a *Adapter) accept(ctx context.Context, ev platform.Event) Acceptance {
	delay := acceptBackoffMin
	for attempt := 1; ; attempt++ {
		res, err := a.opts.Accept(ctx, ev)
		if err == nil {
			return res
		}
		if ctx.Err() != nil {
			a.log.Warn("discord: a message could not be accepted before the connection closed", "message", ev.MessageID, "err", errText(err))
			return Duplicate
		}
		a.log.Warn("discord: could not accept a message; retrying", "message", ev.MessageID, "attempt", attempt, "retry_in", delay, "err", errText(err))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		delay = min(2*delay, acceptBackoffMax)
	}
}

// The back-off of a failed Accept.
const (
	acceptBackoffMin = 100 * time.Millisecond
	acceptBackoffMax = 5 * time.Second
)

// fresh asks the Seen option whether a message is to be handled here: a
// cluster's processes dedupe by message id, so one the previous owner of the
// connection handled, and a catch-up reads again, is not answered twice.
func (a *Adapter) fresh(ctx context.Context, id string) bool {
	if a.opts.Seen == nil {
		return true
	}
	ok, err := a.opts.Seen(ctx, id)
	if err != nil {
		a.log.Warn("discord: could not check whether a message was handled already; handling it", "message", id, "err", errText(err))
		return true
	}
	return ok
}

// channelAllowed applies DISCORD_IGNORED_CHANNELS and, when set,
// DISCORD_ALLOWED_CHANNELS to a guild channel; a thread is judged as itself
// and as its parent.
func (a *Adapter) channelAllowed(ch channelInfo) bool {
	ids := []string{ch.id}
	if ch.thread() && ch.parent != "" {
		ids = append(ids, ch.parent)
	}
	for _, id := range ids {
		if a.ignored[id] {
			return false
		}
	}
	if len(a.allowed) == 0 {
		return true
	}
	for _, id := range ids {
		if a.allowed[id] {
			return true
		}
	}
	return false
}

func (a *Adapter) when(t time.Time) time.Time {
	if t.IsZero() {
		return a.now()
	}
	return t
}

func (a *Adapter) anyRole(roles []string) bool {
	for _, r := range roles {
		if a.roles[r] {
			return true
		}
	}
	return false
}

// ThreadName is upstream's auto-thread name: the first 80 characters of the
// message (on one line), "..." when cut, "Hermes" when there is none.
func ThreadName(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "Hermes"
	}
	if r := []rune(text); len(r) > 80 {
		return string(r[:80]) + "..."
	}
	return text
}

func (a *Adapter) onEdit(ctx context.Context, h platform.Handler, m *discordgo.Message) {
	// No author: a partial update (an embed unfurled), not an edit.
	if !wellFormed(m) || m.Author == nil || m.Author.ID == a.bot() {
		return
	}
	src, _ := a.source(ctx, m.ChannelID, m.GuildID)
	a.withUser(&src, m.Author)
	h(ctx, platform.Event{Kind: platform.EventEdited, Source: src, Text: cleanText(m.Content, a.bot()), MessageID: m.ID, Time: a.when(derefTime(m.EditedTimestamp))})
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func (a *Adapter) onDelete(ctx context.Context, h platform.Handler, m *discordgo.Message) {
	if !wellFormed(m) {
		return
	}
	src, _ := a.source(ctx, m.ChannelID, m.GuildID)
	h(ctx, platform.Event{Kind: platform.EventDeleted, Source: src, MessageID: m.ID, Time: a.now()})
}

func threadSource(c *discordgo.Channel) platform.Source {
	chat := c.ParentID
	if chat == "" {
		chat = c.ID
	}
	return platform.Source{Platform: Name, ChatType: platform.ChatThread, ChatID: chat, ThreadID: c.ID, ChatName: c.Name, ScopeID: c.GuildID, UserID: c.OwnerID}
}

func (a *Adapter) onThreadCreate(ctx context.Context, h platform.Handler, c *discordgo.Channel) {
	if c == nil || !numeric(c.ID) {
		return
	}
	a.learn(c)
	if c.OwnerID != "" && c.OwnerID == a.bot() {
		return // the bot's own auto-thread: not news to the gateway
	}
	h(ctx, platform.Event{Kind: platform.EventThreadCreated, Source: threadSource(c), Text: c.Name, Time: a.now()})
}

// onThreadUpdate reports a rename: THREAD_UPDATE also comes for archiving
// and other changes, so only a name that differs from the known one counts.
func (a *Adapter) onThreadUpdate(ctx context.Context, h platform.Handler, c *discordgo.Channel) {
	if c == nil || !numeric(c.ID) {
		return
	}
	a.mu.Lock()
	old, known := a.channels[c.ID]
	own := a.renaming[c.ID] == c.Name
	if own {
		delete(a.renaming, c.ID)
	}
	a.mu.Unlock()
	a.learn(c)
	if !known || own || old.name == c.Name {
		return
	}
	h(ctx, platform.Event{Kind: platform.EventThreadRenamed, Source: threadSource(c), Text: c.Name, Time: a.now(),
		Payload: map[string]any{"old_name": old.name}})
}

// onInteraction turns a button press into EventButton. Discord wants an
// answer within 3 seconds, so the press is acknowledged (deferred) at once;
// Ack's text, if any, follows as a message only the presser sees.
func (a *Adapter) onInteraction(ctx context.Context, h platform.Handler, i *discordgo.Interaction) {
	if i == nil || i.Type != discordgo.InteractionMessageComponent || !numeric(i.ID) || !numeric(i.ChannelID) {
		return
	}
	data, ok := i.Data.(discordgo.MessageComponentInteractionData)
	if !ok || !a.firstTime(i.ID) {
		return
	}
	user := i.User
	if i.Member != nil && i.Member.User != nil {
		user = i.Member.User
	}
	if user == nil {
		return
	}
	ackCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err := a.session.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, discordgo.WithContext(ackCtx))
	cancel()
	if err != nil {
		a.log.Warn("discord: could not acknowledge a button press", "err", errText(err))
	}
	src, _ := a.source(ctx, i.ChannelID, i.GuildID)
	a.withUser(&src, user)
	if i.Member != nil {
		src.RoleAuthorized = a.anyRole(i.Member.Roles)
	}
	ev := platform.Event{Kind: platform.EventButton, Source: src, Data: data.CustomID, Time: a.now()}
	if i.Message != nil {
		ev.MessageID = i.Message.ID
	}
	var once sync.Once
	ev.Ack = func(text string) {
		once.Do(func() {
			if text == "" {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := a.session.FollowupMessageCreate(i, false, &discordgo.WebhookParams{Content: truncate(text, maxMessage), Flags: discordgo.MessageFlagsEphemeral}, discordgo.WithContext(ctx))
			if err != nil {
				a.log.Warn("discord: could not answer a button press", "err", errText(err))
			}
		})
	}
	h(ctx, ev)
}

func wellFormed(m *discordgo.Message) bool {
	return m != nil && numeric(m.ID) && numeric(m.ChannelID) && (m.GuildID == "" || numeric(m.GuildID))
}

func mentionsBot(m *discordgo.Message, bot string) bool {
	if bot == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == bot {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+bot+">") || strings.Contains(m.Content, "<@!"+bot+">")
}

// cleanText is the message without the bot's mention, capped.
func cleanText(s, bot string) string {
	if bot != "" {
		s = strings.ReplaceAll(s, "<@!"+bot+">", "")
		s = strings.ReplaceAll(s, "<@"+bot+">", "")
	}
	return truncate(strings.TrimSpace(s), maxInbound)
}

// numeric reports whether id is a Discord snowflake: digits only.
func numeric(id string) bool {
	if id == "" || len(id) > 20 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
