package discordfake

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is one bot connection; writes are serialised (gorilla allows one
// writer at a time).
type wsConn struct {
	ws   *websocket.Conn
	mu   sync.Mutex
	live bool // counted in Server.live (under Server.mu)
}

func (c *wsConn) sendRaw(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *wsConn) send(f frame) {
	b, _ := json.Marshal(f)
	c.sendRaw(b)
}

func (c *wsConn) op(op int, d any) {
	raw, _ := json.Marshal(d)
	c.send(frame{Op: op, D: raw})
}

// serveGateway is the gateway websocket: HELLO, then IDENTIFY or RESUME, then
// heartbeats until the bot or the fake drops the connection.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := s.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws}
	defer func() { _ = ws.Close() }()
	ws.SetReadLimit(1 << 20)
	c.op(10, map[string]any{"heartbeat_interval": s.HeartbeatInterval})
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			s.mu.Lock()
			if s.conn == c {
				s.conn = nil
			}
			if c.live {
				c.live = false
				s.live--
			}
			s.notifyLocked()
			s.mu.Unlock()
			return
		}
		var f struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(b, &f) != nil {
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "decode error"), time.Now().Add(time.Second))
			return
		}
		switch f.Op {
		case 1: // heartbeat
			s.mu.Lock()
			s.beats++
			mute := s.mute
			s.notifyLocked()
			s.mu.Unlock()
			if !mute {
				c.op(11, nil)
			}
		case 2:
			if !s.identifyConn(c, f.D) {
				return
			}
		case 6:
			s.resumeConn(c, f.D)
		}
	}
}

func (s *Server) identifyConn(c *wsConn, d json.RawMessage) bool {
	var id struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(d, &id)
	s.mu.Lock()
	code := s.refuse
	s.mu.Unlock()
	if tok, _ := trimBot(id.Token); tok != Token && id.Token != Token {
		code = 4004
	}
	if code != 0 {
		c.mu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, "refused"), time.Now().Add(time.Second))
		c.mu.Unlock()
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identify = append(s.identify, d)
	s.sessionID = "session-" + s.newIDLocked()
	s.log = nil
	ready, _ := json.Marshal(map[string]any{
		"v": 9, "session_id": s.sessionID, "resume_gateway_url": "ws" + s.srv.URL[len("http"):] + "/gateway",
		"user":        map[string]any{"id": BotID, "username": BotName, "bot": true},
		"application": map[string]any{"id": ApplicationID},
		"guilds":      []any{},
	})
	f := frame{Op: 0, D: ready, S: 1, Type: "READY"}
	s.log = append(s.log, f)
	c.send(f)
	s.conn = c
	s.countLiveLocked(c)
	s.notifyLocked()
	return true
}

// countLiveLocked counts c among the identified connections still open: a
// bot that connects twice at once (two processes with one token) shows.
func (s *Server) countLiveLocked(c *wsConn) {
	if !c.live {
		c.live = true
		s.live++
		s.maxLive = max(s.maxLive, s.live)
	}
}

// resumeConn replays what the bot missed (from its seq, less the overlap)
// then says RESUMED; an unknown session gets op 9 (not resumable).
func (s *Server) resumeConn(c *wsConn, d json.RawMessage) {
	var rp struct {
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &rp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp.SessionID != s.sessionID || s.sessionID == "" {
		c.op(9, false)
		return
	}
	s.resumes++
	from := max(rp.Seq-int64(s.overlap), 0)
	for _, f := range s.log[min(from, int64(len(s.log))):] {
		c.send(f)
	}
	f := frame{Op: 0, D: json.RawMessage(`{}`), S: int64(len(s.log)) + 1, Type: "RESUMED"}
	s.log = append(s.log, f)
	c.send(f)
	s.conn = c
	s.countLiveLocked(c)
	s.notifyLocked()
}
