package app

import (
	"strings"

	"github.com/hermes-go/hermes/internal/skills"
)

// Skills is the command's skill catalog: the user's skills under
// $HERMES_HOME/skills and those the loaded plugins registered, read when asked
// (a skill edited during a chat is served as it now is).
func (h *Host) Skills() *skills.Catalog {
	return &skills.Catalog{UserDir: h.home.SkillsDir(), Plugins: func() []skills.Registered {
		var out []skills.Registered
		for _, s := range h.Registry.Skills() {
			ns, _, _ := strings.Cut(s.Name, ":")
			out = append(out, skills.Registered{Name: s.Name, Path: s.Path, Description: s.Description, Plugin: ns})
		}
		return out
	}}
}
