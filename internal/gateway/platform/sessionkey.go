package platform

import "strings"

// KeyOptions are the config keys that shape session keys.
type KeyOptions struct {
	GroupSessionsPerUser  bool   // group_sessions_per_user (default true)
	ThreadSessionsPerUser bool   // thread_sessions_per_user (default false)
	Profile               string // the hermes profile; "" or "default" is main
}

// DefaultKeyOptions are upstream's defaults.
func DefaultKeyOptions() KeyOptions { return KeyOptions{GroupSessionsPerUser: true} }

// SessionKey is upstream's build_session_key (wave2 §2.2):
// <ns>:<platform>:<chat_type>[:<scope>][:<chat_id>] then, for DMs,
// [:<user>][:<thread>], for groups, channels and threads [:<thread>][:<user>].
func SessionKey(src Source, o KeyOptions) string {
	parts := []string{Namespace(o.Profile), src.Platform}
	chatType := src.ChatType
	if chatType == "" {
		chatType = ChatDM
	}
	thread := src.ThreadID
	if src.ProspectiveThreadID != "" {
		chatType, thread = ChatThread, src.ProspectiveThreadID
	}
	parts = append(parts, chatType)
	if src.ScopeID != "" && src.Platform == "slack" {
		parts = append(parts, src.ScopeID)
	}
	if src.ChatID != "" {
		parts = append(parts, src.ChatID)
	}
	user := src.UserIDAlt
	if user == "" {
		user = src.UserID
	}
	if chatType == ChatDM {
		if src.ChatID == "" && user != "" {
			parts = append(parts, user)
		}
		if thread != "" {
			parts = append(parts, thread)
		}
		return strings.Join(parts, ":")
	}
	if thread != "" {
		parts = append(parts, thread)
	}
	// One session per participant, unless in a thread, which is shared unless
	// asked otherwise.
	perUser := o.GroupSessionsPerUser && (thread == "" || o.ThreadSessionsPerUser)
	if perUser && user != "" {
		parts = append(parts, user)
	}
	return strings.Join(parts, ":")
}

// Namespace is the key's first part for profile: agent:main for none or
// "default", agent:main~ for a profile named main, else agent:<profile>.
func Namespace(profile string) string {
	switch profile {
	case "", "default":
		return "agent:main"
	case "main":
		return "agent:main~"
	}
	return "agent:" + profile
}
