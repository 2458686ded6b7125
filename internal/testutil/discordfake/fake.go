// Package discordfake is a loopback Discord for tests: the REST API a bot
// uses (under /api/v9) and the gateway websocket (HELLO, IDENTIFY → READY,
// heartbeats, dispatches, RESUME → RESUMED, forced disconnects), with a Go API
// to push events and to read what the bot did. It speaks the real protocol so
// the adapter under test runs discordgo unchanged.
package discordfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Token is the bot token the fake accepts (without the "Bot " prefix).
const Token = "fake-discord-token"

// BotID and ApplicationID are the fake bot's identity, as READY reports it.
const (
	BotID         = "900000000000000001"
	BotName       = "hermes-bot"
	ApplicationID = "900000000000000002"
)

// Channel types the fake models (Discord's values).
const (
	ChannelGuildText    = 0
	ChannelDM           = 1
	ChannelGuildNews    = 5 // the fake opens no threads here
	ChannelPublicThread = 11
)

// Channel is one channel of the fake's world.
type Channel struct {
	ID       string `json:"id"`
	Type     int    `json:"type"`
	GuildID  string `json:"guild_id,omitempty"`
	Name     string `json:"name,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	OwnerID  string `json:"owner_id,omitempty"`
}

// Message is a message the bot sent or edited, as the fake received it.
type Message struct {
	ID         string
	ChannelID  string
	Content    string
	ReplyTo    string   // message_reference.message_id
	Buttons    []string // custom_id of every button, in order
	Labels     []string
	Edited     bool
	NoMentions bool // allowed_mentions.parse was given and empty
}

// Reaction is one PUT .../reactions/{emoji}/@me.
type Reaction struct{ ChannelID, MessageID, Emoji string }

// Rename is one PATCH /channels/{id} with a name.
type Rename struct{ ChannelID, Name string }

// ThreadStart is one POST /channels/{id}/messages/{mid}/threads.
type ThreadStart struct {
	ChannelID, MessageID, Name string
	AutoArchive                int
}

// Callback is one interaction callback or follow-up.
type Callback struct {
	InteractionID string
	Type          int    // interaction response type; 0 for a follow-up message
	Content       string // a follow-up's content
}

// Server is the fake. Create it with New; it stops when the test ends.
type Server struct {
	fail func(format string, args ...any) // a test's Fatalf
	srv  *httptest.Server
	up   websocket.Upgrader

	// HeartbeatInterval is what HELLO announces (ms); set before the bot connects.
	HeartbeatInterval int

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every recorded change
	channels     map[string]Channel
	nextID       int64
	pastSeq      int64
	historyReads int
	members      map[string][]string // guild/user → roles, from the messages users wrote
	history      map[string][]stored // channel → its messages, oldest first (GET .../messages)
	sessionID    string
	log          []frame // every dispatch of the current session, seq = index+1
	conn         *wsConn // the live, identified connection, if any
	live         int     // identified (or resumed) connections not yet closed
	maxLive      int     // the most there were at once
	identify     []json.RawMessage
	resumes      int
	beats        int
	messages     []Message
	reactions    []Reaction
	renames      []Rename
	threads      []ThreadStart
	callbacks    []Callback
	typing       []string
	limits       map[string][]time.Duration // route → retry_after answers still to give
	attempts     map[string][]time.Time     // route → when each request arrived
	overlap      int                        // events a RESUME replays again beyond the client's seq
	mute         bool                       // heartbeats go unacknowledged (a zombie connection)
	refuse       int                        // close code IDENTIFY is answered with, 0 = READY
}

type frame struct {
	Op   int             `json:"op"`
	D    json.RawMessage `json:"d"`
	S    int64           `json:"s,omitempty"`
	Type string          `json:"t,omitempty"`
}

// New starts a fake Discord on loopback for t; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := Start(func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format, args...)
	})
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake Discord on loopback outside a testing.TB (a
// testscript's setup, say); fail reports the fake's errors (Wait's
// timeouts); the caller must Close it.
func Start(fail func(format string, args ...any)) *Server {
	s := &Server{
		fail:              fail,
		HeartbeatInterval: 41250,
		changed:           make(chan struct{}),
		channels:          map[string]Channel{},
		history:           map[string][]stored{},
		members:           map[string][]string{},
		limits:            map[string][]time.Duration{},
		attempts:          map[string][]time.Time{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway", s.serveGateway)
	mux.HandleFunc("/gateway/", s.serveGateway) // discordgo adds a trailing slash
	mux.HandleFunc("/api/v9/", s.serveREST)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to give the adapter (platforms.discord.extra.base_url).
func (s *Server) URL() string { return s.srv.URL }

// Close drops the live connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		_ = c.ws.Close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// NewID returns a fresh snowflake.
func (s *Server) NewID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIDLocked()
}

// newIDLocked is a snowflake of now, as Discord mints them (the millisecond
// since Discord's epoch in the top bits), strictly increasing.
func (s *Server) newIDLocked() string {
	return s.idAtLocked(time.Now())
}

func (s *Server) idAtLocked(t time.Time) string {
	if t.Before(time.Now().Add(-time.Second)) {
		// A message of the past, for history only: its own millisecond,
		// the low bits (Discord's worker and sequence) telling it apart.
		s.pastSeq++
		return strconv.FormatInt(snowflake(t)|s.pastSeq&0xfff, 10)
	}
	s.nextID = max(snowflake(t), s.nextID+1)
	return strconv.FormatInt(s.nextID, 10)
}

// AddChannel adds a channel (a guild text channel, a thread) to the world.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[c.ID] = c
}

// ReplayOverlap makes the next RESUMEs replay n events the client already has
// (a real gateway may), to test that the bot does not act twice.
func (s *Server) ReplayOverlap(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overlap = n
}

// RateLimit makes the next len(retryAfter) requests to route (e.g.
// "POST /channels/{id}/messages", with the literal ids) answer 429 with
// each retry_after in turn.
func (s *Server) RateLimit(route string, retryAfter ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[route] = append(s.limits[route], retryAfter...)
}

// Attempts is when each request to route arrived, 429s included.
func (s *Server) Attempts(route string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.attempts[route]...)
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called under the fake's lock, with the fake) holds
// or ctx ends; it fails the test on timeout, naming what.
func (s *Server) Wait(ctx context.Context, what string, cond func(v View) bool) {
	for {
		s.mu.Lock()
		ok := cond(View{s})
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.fail("discordfake: timed out waiting for %s", what)
			return
		}
	}
}

// View is the fake's records, read inside Wait (the lock is held).
type View struct{ s *Server }

func (v View) Messages() []Message    { return v.s.messages }
func (v View) Reactions() []Reaction  { return v.s.reactions }
func (v View) Renames() []Rename      { return v.s.renames }
func (v View) Threads() []ThreadStart { return v.s.threads }
func (v View) Callbacks() []Callback  { return v.s.callbacks }
func (v View) Typing() []string       { return v.s.typing }
func (v View) Identifies() int        { return len(v.s.identify) }
func (v View) Resumes() int           { return v.s.resumes }
func (v View) Heartbeats() int        { return v.s.beats }
func (v View) Connected() bool        { return v.s.conn != nil }

// Live is how many identified connections are open now; MaxLive the most at
// once so far (one bot should never hold two).
func (v View) Live() int    { return v.s.live }
func (v View) MaxLive() int { return v.s.maxLive }
func (v View) Channel(id string) (Channel, bool) {
	c, ok := v.s.channels[id]
	return c, ok
}

// Snapshot runs f with the records under the lock (for assertions after a Wait).
func (s *Server) Snapshot(f func(v View)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(View{s})
}

// Identify is the IDENTIFY payload the bot sent last (nil before).
func (s *Server) Identify() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.identify) == 0 {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(s.identify[len(s.identify)-1], &m)
	return m
}

// Author is who wrote a pushed message.
type Author struct {
	ID, Name string
	Bot      bool
}

// MessageIn is a message a user writes, for MessageCreate.
type MessageIn struct {
	ID        string // "" = a fresh id (of At)
	ChannelID string
	GuildID   string // "" for a DM
	Author    Author
	Content   string
	Mentions  []string  // user ids mentioned
	Roles     []string  // the author's roles (guild messages)
	At        time.Time // when it was written; zero = now (the id encodes it)
}

// MessageCreate dispatches MESSAGE_CREATE and returns the message id. The
// message joins its channel's history (GET /channels/{id}/messages) whether
// or not a bot is connected to hear it.
func (s *Server) MessageCreate(m MessageIn) string {
	d := s.post(&m)
	if m.GuildID != "" {
		d["guild_id"] = m.GuildID
		d["member"] = map[string]any{"roles": nonNil(m.Roles)}
	}
	s.Dispatch("MESSAGE_CREATE", d)
	return m.ID
}

// Post puts a message in its channel's history without telling the bot: one
// written while no bot was connected, found only by reading the channel.
func (s *Server) Post(m MessageIn) string {
	s.post(&m)
	return m.ID
}

// PostOffline is Post only while no bot is connected (false, and nothing
// posted, otherwise): a message that certainly reached no websocket.
func (s *Server) PostOffline(m MessageIn) (string, bool) {
	s.mu.Lock()
	live := s.conn != nil || s.live > 0
	s.mu.Unlock()
	if live {
		return "", false
	}
	// A bot connecting now gets a fresh session: nothing before READY is
	// replayed to it, so this message reaches it only by reading the channel.
	s.post(&m)
	return m.ID, true
}

// post records m in the history and returns its MESSAGE_CREATE payload.
func (s *Server) post(m *MessageIn) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ID == "" {
		at := m.At
		if at.IsZero() {
			at = time.Now()
		}
		m.ID = s.idAtLocked(at)
	}
	mentions := make([]map[string]any, 0, len(m.Mentions))
	for _, id := range m.Mentions {
		mentions = append(mentions, map[string]any{"id": id, "username": "u" + id})
	}
	d := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"timestamp": idTime(m.ID).Format("2006-01-02T15:04:05.000000-07:00"),
		"author":    map[string]any{"id": m.Author.ID, "username": m.Author.Name, "bot": m.Author.Bot},
		"mentions":  mentions,
	}
	s.recordLocked(m.ChannelID, m.ID, d)
	if m.GuildID != "" {
		s.members[m.GuildID+"/"+m.Author.ID] = nonNil(m.Roles)
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Dispatch sends an op 0 event of type typ with data d (anything JSON) to
// the bot, or keeps it for a RESUME while the bot is away. It returns the
// event's sequence number.
func (s *Server) Dispatch(typ string, d any) int64 {
	raw, err := json.Marshal(d)
	if err != nil {
		s.fail("discordfake: %s payload: %v", typ, err)
		return 0
	}
	return s.DispatchRaw(typ, raw)
}

// DispatchRaw is Dispatch with the payload as written (malformed on purpose).
func (s *Server) DispatchRaw(typ string, raw []byte) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := frame{Op: 0, D: raw, S: int64(len(s.log)) + 1, Type: typ}
	s.log = append(s.log, f)
	if s.conn != nil {
		s.conn.send(f)
	}
	return f.S
}

// SendFrame writes b to the live connection as one text frame, as is (not
// recorded for RESUME): garbage, or an op the bot must cope with.
func (s *Server) SendFrame(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.sendRaw(b)
	}
}

// Disconnect drops the live connection without a close frame, as a network
// failure would; events dispatched until the bot resumes wait for RESUME.
func (s *Server) Disconnect() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.notifyLocked()
	s.mu.Unlock()
	if c != nil {
		c.ws.UnderlyingConn().Close()
	}
}

// ExpireSession forgets the gateway session, as Discord does after a long
// absence: the next RESUME gets op 9 and the bot must identify afresh.
func (s *Server) ExpireSession() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessionID = ""
}

// RefuseIdentify makes IDENTIFY answered by closing with code (4014:
// disallowed intents, 4004: bad token); 0 answers READY again.
func (s *Server) RefuseIdentify(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = code
}

// MuteHeartbeats stops (or resumes) acknowledging heartbeats: the bot must
// notice the connection is dead and resume on a new one.
func (s *Server) MuteHeartbeats(mute bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mute = mute
}

// RequestReconnect sends op 7 (Reconnect): the bot must close and resume.
func (s *Server) RequestReconnect() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.sendRaw([]byte(`{"op":7,"d":null}`))
	}
}

// channelJSON is a channel as the REST API and THREAD_* events carry it.
func channelJSON(c Channel) map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type, "name": c.Name}
	if c.GuildID != "" {
		m["guild_id"] = c.GuildID
	}
	if c.ParentID != "" {
		m["parent_id"] = c.ParentID
	}
	if c.OwnerID != "" {
		m["owner_id"] = c.OwnerID
	}
	return m
}

// ThreadCreate adds a thread someone else opened and dispatches THREAD_CREATE.
func (s *Server) ThreadCreate(c Channel) {
	c.Type = ChannelPublicThread
	s.AddChannel(c)
	s.Dispatch("THREAD_CREATE", channelJSON(c))
}

// ThreadRename renames a thread as a user would and dispatches THREAD_UPDATE.
func (s *Server) ThreadRename(id, name string) {
	s.mu.Lock()
	c := s.channels[id]
	c.Name = name
	s.channels[id] = c
	s.mu.Unlock()
	s.Dispatch("THREAD_UPDATE", channelJSON(c))
}

// ButtonPress dispatches INTERACTION_CREATE for a component press on
// messageID with customID and returns the interaction id.
func (s *Server) ButtonPress(channelID, guildID string, user Author, messageID, customID string) string {
	id := s.NewID()
	d := map[string]any{
		"id": id, "application_id": ApplicationID, "type": 3, "token": "itoken-" + id,
		"channel_id": channelID, "version": 1,
		"message": map[string]any{"id": messageID, "channel_id": channelID},
		"data":    map[string]any{"custom_id": customID, "component_type": 2},
	}
	u := map[string]any{"id": user.ID, "username": user.Name}
	if guildID != "" {
		d["guild_id"] = guildID
		d["member"] = map[string]any{"user": u, "roles": []string{}}
	} else {
		d["user"] = u
	}
	s.Dispatch("INTERACTION_CREATE", d)
	return id
}

func (s *Server) String() string { return fmt.Sprintf("discordfake(%s)", s.srv.URL) }

// trimBot strips the "Bot " prefix of an Authorization header.
func trimBot(h string) (string, bool) { return strings.CutPrefix(h, "Bot ") }
