package platform

import "testing"

func TestSessionKey(t *testing.T) {
	def := DefaultKeyOptions()
	tests := []struct {
		name string
		src  Source
		o    KeyOptions
		want string
	}{
		{"telegram DM", Source{Platform: "telegram", ChatType: ChatDM, ChatID: "123456789", UserID: "123456789"}, def,
			"agent:main:telegram:dm:123456789"},
		{"DM forum topic", Source{Platform: "telegram", ChatType: ChatDM, ChatID: "208214988", ThreadID: "42"}, def,
			"agent:main:telegram:dm:208214988:42"},
		{"DM without chat id falls back to the user", Source{Platform: "signal", ChatType: ChatDM, UserID: "u1"}, def,
			"agent:main:signal:dm:u1"},
		{"DM with neither: one per platform", Source{Platform: "signal", ChatType: ChatDM}, def, "agent:main:signal:dm"},
		{"group, per user", Source{Platform: "discord", ChatType: ChatGroup, ChatID: "c1", UserID: "u1"}, def,
			"agent:main:discord:group:c1:u1"},
		{"group shared", Source{Platform: "discord", ChatType: ChatGroup, ChatID: "c1", UserID: "u1"}, KeyOptions{},
			"agent:main:discord:group:c1"},
		{"alt user id preferred", Source{Platform: "discord", ChatType: ChatGroup, ChatID: "c1", UserID: "u1", UserIDAlt: "alt"}, def,
			"agent:main:discord:group:c1:alt"},
		{"thread shared", Source{Platform: "discord", ChatType: ChatThread, ChatID: "c1", ThreadID: "t1", UserID: "u1"}, def,
			"agent:main:discord:thread:c1:t1"},
		{"thread per user", Source{Platform: "discord", ChatType: ChatThread, ChatID: "c1", ThreadID: "t1", UserID: "u1"},
			KeyOptions{GroupSessionsPerUser: true, ThreadSessionsPerUser: true}, "agent:main:discord:thread:c1:t1:u1"},
		{"auto-thread keyed on the prospective thread", Source{Platform: "discord", ChatType: ChatGroup, ChatID: "c1", UserID: "u1", ProspectiveThreadID: "t9"}, def,
			"agent:main:discord:thread:c1:t9"},
		{"slack scope", Source{Platform: "slack", ChatType: ChatGroup, ScopeID: "T1", ChatID: "C1", UserID: "U1"}, KeyOptions{GroupSessionsPerUser: true, Profile: "coder"},
			"agent:coder:slack:group:T1:C1:U1"},
		{"profile main", Source{Platform: "telegram", ChatType: ChatDM, ChatID: "1"}, KeyOptions{Profile: "main"}, "agent:main~:telegram:dm:1"},
		{"profile default", Source{Platform: "telegram", ChatType: ChatDM, ChatID: "1"}, KeyOptions{Profile: "default"}, "agent:main:telegram:dm:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SessionKey(tc.src, tc.o); got != tc.want {
				t.Fatalf("SessionKey = %q, want %q", got, tc.want)
			}
		})
	}
}
