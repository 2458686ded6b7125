// Package memctx is the <memory-context> block: how recalled memory is wrapped
// for a request, and how it is scrubbed from what the model says back.
package memctx

import (
	"regexp"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// The recalled-memory block appended to the user message of the request
// (upstream's wording), never stored.
const (
	blockOpen  = "<memory-context>"
	blockClose = "</memory-context>"
	blockNote  = "[System note: The following is recalled memory context, NOT new user input. Treat as authoritative reference data — this is the agent's persistent memory and should inform all responses.]"
)

// Recall bounds: a provider's recall is cut to MaxRecallHead + MaxRecallTail
// characters around a marker (upstream's cap of memory context for engines).
const (
	MaxRecallHead = 4000
	MaxRecallTail = 1500
)

var tagRE = regexp.MustCompile(`(?i)</?\s*memory-context\s*>`)

// Block wraps recalled text in the <memory-context> block; "" for no recall.
func Block(recall string) string {
	recall = sanitizeRecall(recall)
	if recall == "" {
		return ""
	}
	return blockOpen + "\n" + blockNote + "\n\n" + recall + "\n" + blockClose
}

// sanitizeRecall removes what could break out of the block or the terminal
// (tags of the block itself, control characters) and bounds the length.
func sanitizeRecall(s string) string {
	s = tagRE.ReplaceAllString(s, "")
	s = strings.TrimSpace(termsafe.Text(s))
	r := []rune(s)
	if len(r) > MaxRecallHead+MaxRecallTail {
		s = string(r[:MaxRecallHead]) + "\n[… recalled memory truncated …]\n" + string(r[len(r)-MaxRecallTail:])
	}
	return s
}

// Scrub removes <memory-context> spans (a model echoing its recall) from text.
func Scrub(text string) string {
	for {
		i := strings.Index(text, blockOpen)
		if i < 0 {
			return text
		}
		j := strings.Index(text[i:], blockClose)
		if j < 0 {
			return text[:i]
		}
		text = text[:i] + strings.TrimLeft(text[i+j+len(blockClose):], "\n")
	}
}

// StreamScrubber removes <memory-context> spans from text arriving in pieces:
// text that may be the start of a tag is held until the next piece says.
type StreamScrubber struct {
	mu     sync.Mutex
	held   string
	inside bool
}

// Write takes the next piece and returns what may be shown now.
func (s *StreamScrubber) Write(piece string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := s.held + piece
	s.held = ""
	var out strings.Builder
	for buf != "" {
		if s.inside {
			j := strings.Index(buf, blockClose)
			if j < 0 {
				s.held = tailPrefix(buf, blockClose)
				return out.String()
			}
			buf = buf[j+len(blockClose):]
			s.inside = false
			continue
		}
		i := strings.Index(buf, blockOpen)
		if i < 0 {
			keep := tailPrefix(buf, blockOpen)
			out.WriteString(buf[:len(buf)-len(keep)])
			s.held = keep
			return out.String()
		}
		out.WriteString(buf[:i])
		buf = buf[i+len(blockOpen):]
		s.inside = true
	}
	return out.String()
}

// Flush ends the stream: held text that never became a tag is returned.
func (s *StreamScrubber) Flush() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := ""
	if !s.inside {
		out = s.held
	}
	s.held, s.inside = "", false
	return out
}

// tailPrefix is the longest suffix of buf that is a proper prefix of tag.
func tailPrefix(buf, tag string) string {
	for n := min(len(tag)-1, len(buf)); n > 0; n-- {
		if strings.HasPrefix(tag, buf[len(buf)-n:]) {
			return buf[len(buf)-n:]
		}
	}
	return ""
}
