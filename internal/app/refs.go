package app

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// @ context references from plugins (upstream agent/context_references.py):
// `@<prefix>:<target>` in a user message, for a prefix a plugin registered, is
// expanded by that plugin and attached below the message. Upstream's caps, in
// its words: at most 32 references per message; a reference over half the
// model's context is not inlined; attachments over half the context in total
// are refused, over a quarter warned about.
const (
	maxRefsPerMessage   = 32
	defaultContextLen   = 128000 // tokens, when model.context_length is not set
	charsPerToken       = 4
	refExpandTimeout    = 30 * time.Second
	inlineBytesSlack    = 512
	refTrailingPunct    = ",.;!?"
	refWarningsHeader   = "--- Context Warnings ---"
	refAttachmentHeader = "--- Attached Context ---"
)

// contextRef is one reference found in a message.
type contextRef struct {
	raw, prefix, target string
}

// parseContextRefs finds the `@prefix:value` references of known prefixes.
func parseContextRefs(msg string, known map[string]*registry.ContextRef) []contextRef {
	var out []contextRef
	for i := 0; i < len(msg); i++ {
		if msg[i] != '@' || (i > 0 && refBlocksAt(msg[i-1])) {
			continue
		}
		j := i + 1
		for j < len(msg) && (isLetter(msg[j]) || j > i+1 && (isDigit(msg[j]) || msg[j] == '_' || msg[j] == '-')) {
			j++
		}
		if j == i+1 {
			continue
		}
		if j >= len(msg) || msg[j] != ':' {
			// @diff and @staged take no value.
			word := strings.ToLower(msg[i+1 : j])
			if bare, ok := known[word]; ok && bareRefs[word] && bare != nil && (j >= len(msg) || !refBlocksAt(msg[j])) {
				out = append(out, contextRef{raw: msg[i:j], prefix: word})
				i = j - 1
			}
			continue
		}
		prefix := strings.ToLower(msg[i+1 : j])
		start := j + 1
		end := refValueEnd(msg, start)
		if end == start {
			continue
		}
		if _, ok := known[prefix]; ok && !bareRefs[prefix] {
			raw := msg[i:end]
			value := strings.TrimRight(msg[start:end], refTrailingPunct)
			raw = raw[:len(raw)-(end-start-len(value))]
			out = append(out, contextRef{raw: raw, prefix: prefix, target: unquoteRef(value)})
		}
		i = end - 1
	}
	return out
}

// refBlocksAt: an '@' right after a word character or '/' is an e-mail address
// or a path, not a reference.
func refBlocksAt(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '/' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// refValueEnd is the end of a value at start: a quoted run (`...`, "...",
// '...', on one line) or the run of non-space characters.
func refValueEnd(msg string, start int) int {
	if start >= len(msg) {
		return start
	}
	if q := msg[start]; q == '`' || q == '"' || q == '\'' {
		if k := strings.IndexByte(msg[start+1:], q); k > 0 && !strings.Contains(msg[start+1:start+1+k], "\n") {
			return start + k + 2
		}
	}
	end := start
	for end < len(msg) && !isSpace(msg[end]) {
		end++
	}
	return end
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func unquoteRef(v string) string {
	if len(v) >= 2 && (v[0] == '`' || v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

func roughTokens(s string) int { return (len(s) + charsPerToken - 1) / charsPerToken }

// expandContextRefs returns msg with the expansions attached, the warnings
// (also attached, so the model knows a reference failed) and a chip for each
// reference attached (what the user is shown: the reference and its size).
func expandContextRefs(ctx context.Context, msg string, known map[string]*registry.ContextRef, contextLen int) (string, []string, []string) {
	refs := parseContextRefs(msg, known)
	if len(refs) == 0 {
		return msg, nil, nil
	}
	var warnings []string
	if len(refs) > maxRefsPerMessage {
		warnings = append(warnings, fmt.Sprintf("@ context refs truncated: %d reference(s) ignored (limit %d per message).", len(refs)-maxRefsPerMessage, maxRefsPerMessage))
		refs = refs[:maxRefsPerMessage]
	}
	if contextLen <= 0 {
		contextLen = defaultContextLen
	}
	hard, soft := max(1, contextLen/2), max(1, contextLen/4)
	budget := hard*charsPerToken + inlineBytesSlack
	type result struct{ warning, block, chip string }
	results := make([]result, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, refExpandTimeout)
			defer cancel()
			text, ok, err := known[ref.prefix].Expand(cctx, ref.target)
			switch {
			case err != nil && builtinRefNames[ref.prefix]:
				results[i].warning = fmt.Sprintf("%s: %v", ref.raw, err)
			case err != nil:
				results[i].warning = fmt.Sprintf("%s: plugin expansion error: %v", ref.raw, err)
			case !ok:
			case (len(text) > budget || roughTokens(text) > hard) && builtinRefNames[ref.prefix]:
				results[i].block = fmt.Sprintf("📎 %s (approximately %d tokens) — too large to inline safely. Not inlined: name a line range (@file:path:N-M) or a smaller target.", ref.raw, roughTokens(text))
			case len(text) > budget || roughTokens(text) > hard:
				results[i].block = fmt.Sprintf("📎 %s (approximately %d tokens) — too large to inline safely. Plugin content not inlined. Query the provider with a narrower target instead of loading the full result.", ref.raw, roughTokens(text))
			default:
				results[i].block = fmt.Sprintf("📌 %s (%d tokens)\n%s", ref.raw, roughTokens(text), text)
				results[i].chip = fmt.Sprintf("%s (%d tokens)", ref.raw, roughTokens(text))
			}
		}()
	}
	wg.Wait()
	var blocks, chips []string
	injected := 0
	for _, r := range results {
		if r.warning != "" {
			warnings = append(warnings, r.warning)
		}
		if r.block != "" {
			blocks = append(blocks, r.block)
			injected += roughTokens(r.block)
		}
		if r.chip != "" {
			chips = append(chips, r.chip)
		}
	}
	if injected > hard {
		warnings = append(warnings, fmt.Sprintf("@ context injection refused: %d tokens exceeds the 50%% hard limit (%d).", injected, hard))
		blocks, chips = nil, nil
	} else if injected > soft {
		warnings = append(warnings, fmt.Sprintf("@ context injection warning: %d tokens exceeds the 25%% soft limit (%d).", injected, soft))
	}
	out := msg
	if len(warnings) > 0 {
		out += "\n\n" + refWarningsHeader + "\n- " + strings.Join(warnings, "\n- ")
	}
	if len(blocks) > 0 {
		out += "\n\n" + refAttachmentHeader + "\n\n" + strings.Join(blocks, "\n\n")
	}
	return strings.TrimSpace(out), warnings, chips
}

// expandReferences expands the plugin @ references of a user message and warns
// the user about each one that failed.
func (c *Chat) expandReferences(ctx context.Context, input string) string {
	if !strings.Contains(input, "@") {
		return input
	}
	known := c.h.Registry.ContextRefs()
	maps.Copy(known, c.h.builtinRefs()) // plugins cannot claim these prefixes; builtins win regardless
	out, warnings, chips := expandContextRefs(ctx, input, known, c.contextLen)
	for _, w := range warnings {
		c.h.f.Warn(w)
	}
	for _, chip := range chips {
		fmt.Fprintf(c.h.f.IO.Err, "📎 attached %s\n", termsafe.Line(chip))
	}
	return out
}
