package registry

// Registered is a snapshot of what one plugin registered, for `plugins show`.
type Registered struct {
	Tools       []string
	Hooks       []HookInfo
	Commands    []CommandInfo
	CLICommands []CLICommandInfo
	Skills      []Skill
	Middleware  []string
	Other       []Other
	Events      []string
}

// HookInfo names one hook registration.
type HookInfo struct {
	Hook     string `json:"hook"`
	Callback string `json:"callback"`
}

// CommandInfo describes a slash command.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ArgsHint    string `json:"args_hint"`
}

// CLICommandInfo describes a `hermes <name>` command.
type CLICommandInfo struct {
	Name string `json:"name"`
	Help string `json:"help"`
}

// Skill is a read-only skill, addressed as "<namespace>:<name>".
type Skill struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Description string `json:"description"`
}

// Other records a registrar this host accepts but does not serve yet (or
// serves in a slot of its own, such as a system prompt section).
type Other struct {
	Registrar string `json:"registrar"`
	Name      string `json:"name"`
	Note      string `json:"note"`
}

// Snapshot returns what plugin has committed.
func (r *Registry) Snapshot(plugin string) Registered {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Registered{}
	e := r.entries[plugin]
	if e == nil {
		return out
	}
	c := &e.committed
	for _, t := range c.tools {
		out.Tools = append(out.Tools, t.tool.Name)
	}
	for _, h := range c.hooks {
		out.Hooks = append(out.Hooks, HookInfo{Hook: h.Hook, Callback: h.Callback})
	}
	for _, cmd := range c.commands {
		out.Commands = append(out.Commands, CommandInfo{Name: cmd.Name, Description: cmd.Description, ArgsHint: cmd.ArgsHint})
	}
	for _, cmd := range c.cliCommands {
		out.CLICommands = append(out.CLICommands, CLICommandInfo{Name: cmd.Name, Help: cmd.Help})
	}
	out.Skills = append(out.Skills, c.skills...)
	for _, mw := range c.middleware {
		out.Middleware = append(out.Middleware, string(mw.Kind))
	}
	out.Other = append(out.Other, c.other...)
	for _, s := range c.subs {
		out.Events = append(out.Events, s.Event)
	}
	return out
}
