package discordfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// maxContent is Discord's limit on a message's content, in characters.
const maxContent = 2000

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func restError(w http.ResponseWriter, code int, apiCode int, msg string) {
	writeJSON(w, code, map[string]any{"code": apiCode, "message": msg})
}

// serveREST routes /api/v9/...: auth, the 429s asked for, then the endpoint.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v9")
	route := r.Method + " " + path
	s.mu.Lock()
	s.attempts[route] = append(s.attempts[route], time.Now())
	var limited time.Duration
	if q := s.limits[route]; len(q) > 0 {
		limited, s.limits[route] = q[0], q[1:]
	}
	s.notifyLocked()
	s.mu.Unlock()

	if tok, ok := trimBot(r.Header.Get("Authorization")); !ok || tok != Token {
		restError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if limited > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int(limited.Seconds()+0.999)))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{
			"message": "You are being rate limited.", "retry_after": limited.Seconds(), "global": false,
		})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		restError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case route == "GET /gateway/bot" || route == "GET /gateway":
		writeJSON(w, http.StatusOK, map[string]any{
			"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway", "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1},
		})
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		s.getChannel(w, parts[1])
	case r.Method == "PATCH" && len(parts) == 2 && parts[0] == "channels":
		s.patchChannel(w, parts[1], body)
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "guilds" && parts[2] == "members":
		s.getMember(w, parts[1], parts[3])
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		s.listMessages(w, parts[1], r.URL.Query())
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		s.createMessage(w, parts[1], body)
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		s.editMessage(w, parts[1], parts[3], body)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "typing":
		s.mu.Lock()
		s.typing = append(s.typing, parts[1])
		s.notifyLocked()
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "PUT" && len(parts) == 7 && parts[0] == "channels" && parts[4] == "reactions" && parts[6] == "@me":
		s.mu.Lock()
		s.reactions = append(s.reactions, Reaction{ChannelID: parts[1], MessageID: parts[3], Emoji: parts[5]})
		s.notifyLocked()
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && len(parts) == 5 && parts[0] == "channels" && parts[4] == "threads":
		s.startThread(w, parts[1], parts[3], body)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		var cb struct {
			Type int `json:"type"`
		}
		_ = json.Unmarshal(body, &cb)
		s.mu.Lock()
		s.callbacks = append(s.callbacks, Callback{InteractionID: parts[1], Type: cb.Type})
		s.notifyLocked()
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks":
		var m struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(body, &m)
		s.mu.Lock()
		s.callbacks = append(s.callbacks, Callback{InteractionID: strings.TrimPrefix(parts[2], "itoken-"), Content: m.Content})
		id := s.newIDLocked()
		s.notifyLocked()
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "content": m.Content})
	default:
		restError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

func (s *Server) getChannel(w http.ResponseWriter, id string) {
	s.mu.Lock()
	c, ok := s.channels[id]
	s.mu.Unlock()
	if !ok {
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, http.StatusOK, channelJSON(c))
}

func (s *Server) patchChannel(w http.ResponseWriter, id string, body []byte) {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &p) != nil || p.Name == "" || utf8.RuneCountInString(p.Name) > 100 {
		restError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	c, ok := s.channels[id]
	if ok {
		c.Name = p.Name
		s.channels[id] = c
		s.renames = append(s.renames, Rename{ChannelID: id, Name: p.Name})
		s.notifyLocked()
	}
	s.mu.Unlock()
	if !ok {
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, http.StatusOK, channelJSON(c))
	if c.Type == ChannelPublicThread {
		s.Dispatch("THREAD_UPDATE", channelJSON(c))
	}
}

type messageBody struct {
	Content   string `json:"content"`
	Reference *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Components []struct {
		Components []struct {
			CustomID string `json:"custom_id"`
			Label    string `json:"label"`
		} `json:"components"`
	} `json:"components"`
}

func (s *Server) createMessage(w http.ResponseWriter, channelID string, body []byte) {
	var m messageBody
	if err := json.Unmarshal(body, &m); err != nil {
		restError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	if n := utf8.RuneCountInString(m.Content); n > maxContent || (n == 0 && len(m.Components) == 0) {
		restError(w, http.StatusBadRequest, 50035, fmt.Sprintf("Invalid Form Body: content must be 1..%d characters (got %d)", maxContent, n))
		return
	}
	s.mu.Lock()
	if _, ok := s.channels[channelID]; !ok {
		s.mu.Unlock()
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	msg := Message{ID: s.newIDLocked(), ChannelID: channelID, Content: m.Content}
	if m.Reference != nil {
		msg.ReplyTo = m.Reference.MessageID
	}
	msg.NoMentions = m.AllowedMentions != nil && len(m.AllowedMentions.Parse) == 0
	for _, row := range m.Components {
		for _, b := range row.Components {
			msg.Buttons = append(msg.Buttons, b.CustomID)
			msg.Labels = append(msg.Labels, b.Label)
		}
	}
	s.messages = append(s.messages, msg)
	out := map[string]any{"id": msg.ID, "channel_id": channelID, "content": msg.Content, "type": 0,
		"timestamp": idTime(msg.ID).Format("2006-01-02T15:04:05.000000-07:00"),
		"author":    map[string]any{"id": BotID, "username": BotName, "bot": true}, "mentions": []any{}}
	if msg.ReplyTo != "" {
		out["type"] = 19 // a reply
		out["message_reference"] = map[string]any{"message_id": msg.ReplyTo, "channel_id": channelID}
	}
	s.recordLocked(channelID, msg.ID, out)
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) editMessage(w http.ResponseWriter, channelID, id string, body []byte) {
	var m messageBody
	if json.Unmarshal(body, &m) != nil || utf8.RuneCountInString(m.Content) > maxContent {
		restError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(body, &keys)
	_, setComponents := keys["components"]
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.messages {
		if s.messages[i].ID == id && s.messages[i].ChannelID == channelID {
			s.messages[i].Content, s.messages[i].Edited = m.Content, true
			if setComponents { // as Discord: given components replace the old ones
				s.messages[i].Buttons, s.messages[i].Labels = nil, nil
				for _, row := range m.Components {
					for _, b := range row.Components {
						s.messages[i].Buttons = append(s.messages[i].Buttons, b.CustomID)
						s.messages[i].Labels = append(s.messages[i].Labels, b.Label)
					}
				}
			}
			s.editHistoryLocked(channelID, id, m.Content)
			s.notifyLocked()
			writeJSON(w, http.StatusOK, map[string]any{"id": id, "channel_id": channelID, "content": m.Content})
			return
		}
	}
	restError(w, http.StatusNotFound, 10008, "Unknown Message")
}

// startThread opens a thread on a message: like Discord, the thread's id is
// the message's, and THREAD_CREATE follows.
func (s *Server) startThread(w http.ResponseWriter, channelID, messageID string, body []byte) {
	var p struct {
		Name        string `json:"name"`
		AutoArchive int    `json:"auto_archive_duration"`
	}
	if json.Unmarshal(body, &p) != nil || p.Name == "" || utf8.RuneCountInString(p.Name) > 100 {
		restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: name must be 1..100 characters")
		return
	}
	s.mu.Lock()
	parent, ok := s.channels[channelID]
	if !ok || parent.Type != ChannelGuildText {
		s.mu.Unlock()
		restError(w, http.StatusBadRequest, 50024, "Cannot execute action on this channel type")
		return
	}
	c := Channel{ID: messageID, Type: ChannelPublicThread, GuildID: parent.GuildID, Name: p.Name, ParentID: channelID, OwnerID: BotID}
	s.channels[c.ID] = c
	s.threads = append(s.threads, ThreadStart{ChannelID: channelID, MessageID: messageID, Name: p.Name, AutoArchive: p.AutoArchive})
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, channelJSON(c))
	s.Dispatch("THREAD_CREATE", channelJSON(c))
}
