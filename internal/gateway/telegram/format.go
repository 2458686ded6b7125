package telegram

import (
	"strings"
	"unicode/utf16"
)

// MaxMessageUnits is Telegram's limit on one message's text, in UTF-16 code
// units (what the Bot API counts).
const MaxMessageUnits = 4096

// utf16Len is the length of s as Telegram counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Split cuts text into pieces of at most limit UTF-16 units, at a line
// break when one is in the second half of a piece, else at a space, else
// between runes (never inside a surrogate pair).
func Split(text string, limit int) []string {
	var out []string
	for utf16Len(text) > limit {
		cut, units := 0, 0 // cut: byte offset where limit is reached
		for i, r := range text {
			if units+utf16.RuneLen(r) > limit {
				cut = i
				break
			}
			units += utf16.RuneLen(r)
		}
		head := text[:cut]
		if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
			cut = i + 1
		} else if i := strings.LastIndexByte(head, ' '); i > len(head)/2 {
			cut = i + 1
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" || len(out) == 0 {
		out = append(out, text)
	}
	return out
}

// mdv2Reserved are the characters MarkdownV2 wants escaped outside entities.
const mdv2Reserved = "_*[]()~`>#+-=|{}.!\\"

func escapeMDV2(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(mdv2Reserved, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeCode escapes what MarkdownV2 wants escaped inside code.
func escapeCode(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s)
}

// MarkdownV2 renders the markdown a model writes as Telegram MarkdownV2:
// code blocks and inline code kept, **bold** as bold, everything else
// escaped so it shows as written. What it cannot map is shown literally,
// never dropped; if Telegram still refuses it, the adapter sends plain text.
func MarkdownV2(md string) string {
	var b strings.Builder
	for md != "" {
		switch {
		case strings.HasPrefix(md, "```"):
			end := strings.Index(md[3:], "```")
			if end < 0 {
				b.WriteString(escapeMDV2(md))
				return b.String()
			}
			body := md[3 : 3+end]
			lang, code, hasLang := strings.Cut(body, "\n")
			if !hasLang || strings.ContainsAny(lang, " `") {
				lang, code = "", body
			}
			b.WriteString("```" + lang + "\n" + escapeCode(strings.TrimPrefix(code, "\n")) + "```")
			md = md[6+end:]
		case md[0] == '`':
			end := strings.IndexByte(md[1:], '`')
			if end < 0 || strings.Contains(md[1:1+end], "\n") {
				b.WriteString(escapeMDV2("`"))
				md = md[1:]
				continue
			}
			b.WriteString("`" + escapeCode(md[1:1+end]) + "`")
			md = md[2+end:]
		case strings.HasPrefix(md, "**"):
			end := strings.Index(md[2:], "**")
			if end <= 0 || strings.Contains(md[2:2+end], "\n") {
				b.WriteString(escapeMDV2("**"))
				md = md[2:]
				continue
			}
			b.WriteString("*" + escapeMDV2(md[2:2+end]) + "*")
			md = md[4+end:]
		default:
			next := len(md)
			for _, marker := range []string{"`", "**"} {
				if i := strings.Index(md[1:], marker); i >= 0 && i+1 < next {
					next = i + 1
				}
			}
			b.WriteString(escapeMDV2(md[:next]))
			md = md[next:]
		}
	}
	return b.String()
}
