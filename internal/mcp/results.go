package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/lazyre"
)

// ResultJSON turns a tool call's result into the tool-result JSON the model
// reads (wave2 §3.2): {"result": text} plus "structuredContent" when the
// server gave some (or the structured content as result when there is no
// text), and {"error": text} for isError, its credentials redacted.
func ResultJSON(res *mcp.CallToolResult) string {
	var lines []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			lines = append(lines, v.Text)
		case *mcp.ImageContent:
			lines = append(lines, fmt.Sprintf("[image: %s, %d bytes, not shown]", v.MIMEType, len(v.Data)))
		case *mcp.AudioContent:
			lines = append(lines, fmt.Sprintf("[audio: %s, %d bytes, not shown]", v.MIMEType, len(v.Data)))
		case *mcp.ResourceLink:
			lines = append(lines, fmt.Sprintf("[resource link: %s]", v.URI))
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				lines = append(lines, v.Resource.Text)
			} else if v.Resource != nil {
				lines = append(lines, fmt.Sprintf("[resource: %s, not shown]", v.Resource.URI))
			}
		default:
			lines = append(lines, fmt.Sprintf("[unsupported %T content, not shown]", c))
		}
	}
	text := strings.Join(lines, "\n")
	if res.IsError {
		if text == "" {
			text = "the MCP tool reported an error without a message"
		}
		return encode(map[string]any{"error": Redact(text)})
	}
	out := map[string]any{"result": text}
	if res.StructuredContent != nil {
		switch {
		case text == "":
			out["result"] = res.StructuredContent
		case !sameJSON(text, res.StructuredContent):
			out["structuredContent"] = res.StructuredContent
		}
	}
	if len(res.Meta) > 0 {
		out["_meta"] = map[string]any(res.Meta)
	}
	return encode(out)
}

// ErrorJSON is {"error": msg}, redacted.
func ErrorJSON(msg string) string { return encode(map[string]any{"error": Redact(msg)}) }

func sameJSON(text string, v any) bool {
	var parsed any
	if json.Unmarshal([]byte(text), &parsed) != nil {
		return false
	}
	a, err1 := json.Marshal(parsed)
	b, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

func encode(v map[string]any) string {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return `{"error": "the MCP result could not be encoded as JSON"}`
	}
	return string(b)
}

var secretRE = lazyre.New(`(?i)(ghp_[A-Za-z0-9]{8,}|gh[ousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}|sk-[A-Za-z0-9_-]{8,}|xox[abp]-[A-Za-z0-9-]{8,}|AKIA[0-9A-Z]{16}|bearer\s+[A-Za-z0-9._~+/=-]{4,}|(?:token|key|api_key|apikey|secret|password|passwd|pwd)\s*[=:]\s*[^\s&,;"']+)`)

// Redact hides credentials in text from an MCP server (error messages often
// echo the request that failed).
func Redact(s string) string {
	return secretRE.Get().ReplaceAllStringFunc(s, func(m string) string {
		low := strings.ToLower(m)
		switch {
		case strings.HasPrefix(low, "bearer"):
			return m[:len("bearer")] + " [REDACTED]"
		case strings.ContainsAny(m, "=:") && !strings.HasPrefix(low, "sk-") && !strings.HasPrefix(low, "gh"):
			i := strings.IndexAny(m, "=:")
			return m[:i+1] + "[REDACTED]"
		}
		return "[REDACTED]"
	})
}
