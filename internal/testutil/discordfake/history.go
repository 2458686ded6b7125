package discordfake

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// discordEpoch is the millisecond Discord's snowflakes count from (2015).
const discordEpoch = 1420070400000

// snowflake is the smallest id of a message written at t.
func snowflake(t time.Time) int64 {
	return max(t.UnixMilli()-discordEpoch, 0) << 22
}

// idTime is when the message with snowflake id was written (zero for an id
// that is not a number).
func idTime(id string) time.Time {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(n>>22) + discordEpoch).UTC()
}

// stored is one message of a channel's history, as the REST API returns it
// (no guild_id or member: those come only with MESSAGE_CREATE).
type stored struct {
	id   uint64
	json map[string]any
}

// recordLocked appends a message to channel's history, kept in id order.
func (s *Server) recordLocked(channel, id string, d map[string]any) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return // a test's made-up id: not in any history
	}
	rest := make(map[string]any, len(d))
	for k, v := range d {
		if k != "guild_id" && k != "member" {
			rest[k] = v
		}
	}
	h := append(s.history[channel], stored{id: n, json: rest})
	sort.SliceStable(h, func(i, j int) bool { return h[i].id < h[j].id })
	s.history[channel] = h
}

// editHistoryLocked gives a stored message new content (a copy: readers
// may be encoding the old one).
func (s *Server) editHistoryLocked(channel, id, content string) {
	h := s.history[channel]
	for i := range h {
		if strconv.FormatUint(h[i].id, 10) != id {
			continue
		}
		c := make(map[string]any, len(h[i].json)+1)
		for k, v := range h[i].json {
			c[k] = v
		}
		c["content"], c["edited_timestamp"] = content, time.Now().UTC().Format("2006-01-02T15:04:05.000000-07:00")
		h[i].json = c
	}
}

// listMessages is GET /channels/{id}/messages: with after, the oldest
// limit messages after that id; otherwise the newest limit (before that id,
// if given). Either way newest first, as Discord returns them. limit is
// 1..100, 50 when absent.
func (s *Server) listMessages(w http.ResponseWriter, channel string, q url.Values) {
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: limit must be 1..100")
			return
		}
		limit = n
	}
	var after, before uint64
	var err error
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseUint(v, 10, 64); err != nil {
			restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: after is not a snowflake")
			return
		}
	}
	if v := q.Get("before"); v != "" {
		if before, err = strconv.ParseUint(v, 10, 64); err != nil {
			restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: before is not a snowflake")
			return
		}
	}
	s.mu.Lock()
	_, known := s.channels[channel]
	var pick []stored
	for _, m := range s.history[channel] {
		if m.id > after && (before == 0 || m.id < before) {
			pick = append(pick, m)
		}
	}
	s.historyReads++
	s.notifyLocked()
	s.mu.Unlock()
	if !known {
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	if len(pick) > limit {
		if q.Get("after") != "" {
			pick = pick[:limit]
		} else {
			pick = pick[len(pick)-limit:]
		}
	}
	out := make([]map[string]any, 0, len(pick))
	for i := len(pick) - 1; i >= 0; i-- {
		out = append(out, pick[i].json)
	}
	writeJSON(w, http.StatusOK, out)
}

// HistoryReads counts GET /channels/{id}/messages requests.
func (v View) HistoryReads() int { return v.s.historyReads }

// Replies counts the bot's messages that reply to messageID.
func (v View) Replies(messageID string) int {
	n := 0
	for _, m := range v.s.messages {
		if m.ReplyTo == messageID {
			n++
		}
	}
	return n
}

// getMember is GET /guilds/{guild}/members/{user}: the roles the user had
// on their last message there.
func (s *Server) getMember(w http.ResponseWriter, guild, user string) {
	s.mu.Lock()
	roles, ok := s.members[guild+"/"+user]
	s.mu.Unlock()
	if !ok {
		restError(w, http.StatusNotFound, 10007, "Unknown Member")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": map[string]any{"id": user, "username": "u" + user}, "roles": roles})
}
