package hostapi

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// The register_* call-backs: each checks what upstream checks, then records a
// handle in the registry (pending until the plugin commits). Out-of-process
// plugins come through the table; compiled-in ones through LocalContext, with
// handlers of their own.

func registerTool(_ context.Context, s *Session, rp protocol.RegisterToolParams) (any, error) {
	return s.RegisterTool(rp, s.remoteTool(rp), s.remoteCheck(rp.CheckHandle))
}

// RegisterTool records a tool served by handler (check may be nil).
func (s *Session) RegisterTool(rp protocol.RegisterToolParams, handler tools.Handler, check func(context.Context) bool) (any, error) {
	key := s.p.ID()
	if strings.TrimSpace(rp.Name) == "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_tool: name must be a non-empty string")
	}
	if rp.Toolset == "" {
		rp.Toolset = key
	}
	schema := rp.Schema
	if schema == nil {
		schema = map[string]any{}
	}
	// As upstream: override=True needs the permission whether or not the name is
	// taken yet (plugins register in parallel, so "taken" is only known at commit).
	if rp.Override && !s.overrideAllowed() {
		return nil, protocol.Errorf(protocol.CodePermission,
			"Plugin '%s' cannot override built-in tool '%s'. Set plugins.entries.%s.allow_tool_override: true in config.yaml to allow this plugin to replace built-in tools.",
			s.p.Manifest().Name, rp.Name, key)
	}
	// Only a tool held before this load began is refused here; a clash with another
	// plugin of the same load is settled at commit, in load order, whichever
	// register() runs first.
	if existing, ok := s.h.reg.Tools().Get(rp.Name); ok && existing.Source != key && !rp.Override && !s.h.opts.Plugins.Loading(existing.Source) {
		s.p.Warnf("plugin %s tried to shadow tool '%s' (registered by %s) without override=True; skipped", key, rp.Name, existing.Source)
		return protocol.RegisterResult{Registered: false, Warning: "tool name already taken"}, nil
	}
	t := &tools.Tool{
		Name: rp.Name, Toolset: rp.Toolset, Description: rp.Description, Emoji: rp.Emoji, Schema: schema,
		Source: key, RequiresEnv: rp.RequiresEnv, IsAsync: rp.IsAsync, Check: check, Handler: handler,
	}
	s.h.reg.AddTool(key, t, rp.Override)
	return protocol.RegisterResult{Registered: true}, nil
}

func registerHook(_ context.Context, s *Session, rp protocol.RegisterHookParams) (any, error) {
	s.h.reg.AddHook(s.p.ID(), &registry.Hook{Hook: rp.Hook, Callback: rp.Callback, Handle: rp.Handle,
		Invoke: s.remoteHook(rp.Hook, rp.Handle), InvokeEncoded: s.remoteHookEncoded(rp.Hook, rp.Handle)})
	return protocol.RegisterResult{Registered: true}, nil
}

// RegisterHook records an in-process hook callback.
func (s *Session) RegisterHook(hook, callback string, invoke func(context.Context, map[string]any) (any, error)) {
	s.h.reg.AddHook(s.p.ID(), &registry.Hook{Hook: hook, Callback: callback, Invoke: invoke})
}

func registerCommand(_ context.Context, s *Session, rp protocol.RegisterCommandParams) (any, error) {
	return s.RegisterCommand(rp, s.remoteCommand(rp.Handle))
}

var commandModes = map[string]bool{"options": true, "text": true, "mixed": true}

// RegisterCommand records a slash command served by run.
func (s *Session) RegisterCommand(rp protocol.RegisterCommandParams, run func(context.Context, string) (string, bool, error)) (any, error) {
	key := s.p.ID()
	name := registry.NormalizeCommandName(rp.Name)
	if name == "" {
		s.p.Warnf("plugin %s registered a command with an empty name; skipped", key)
		return protocol.RegisterResult{Registered: false}, nil
	}
	if builtinSlashCommands[name] {
		s.p.Warnf("plugin %s: command '/%s' conflicts with a built-in command. Skipping.", key, name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with a built-in command"}, nil
	}
	mode := rp.ArgumentMode
	if !commandModes[mode] {
		mode = ""
		if rp.ArgsHint != "" {
			mode = "text"
		}
	}
	desc := rp.Description
	if desc == "" {
		desc = "Plugin command"
	}
	s.h.reg.AddCommand(key, &registry.Command{Name: name, Description: desc, ArgsHint: rp.ArgsHint, ArgumentMode: mode, Plugin: key, IsAsync: rp.IsAsync, Run: run})
	return protocol.RegisterResult{Registered: true}, nil
}

func registerCLICommand(_ context.Context, s *Session, rp protocol.RegisterCLICommandParams) (any, error) {
	return s.RegisterCLICommand(rp.Name, rp.Help, rp.Description, s.remoteCLI(rp))
}

var cliNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// RegisterCLICommand records a `hermes <name>` command served by run.
func (s *Session) RegisterCLICommand(name, help, description string, run func(context.Context, []string, io.Writer, io.Writer) (int, error)) (any, error) {
	key := s.p.ID()
	if len(name) > 64 || !cliNameRE.MatchString(name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_cli_command: name %q must be letters, digits, '-' or '_'", name)
	}
	if builtinCLIVerbs[name] {
		s.p.Warnf("plugin %s: CLI command '%s' conflicts with a built-in hermes command; skipped", key, name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with a built-in command"}, nil
	}
	s.h.reg.AddCLICommand(key, &registry.CLICommand{Name: name, Help: help, Description: description, Plugin: key, Run: run})
	return protocol.RegisterResult{Registered: true}, nil
}

var skillNameRE = lazyre.New(`^[a-zA-Z0-9_-]+$`)

func registerSkill(_ context.Context, s *Session, rp protocol.RegisterSkillParams) (any, error) {
	if strings.Contains(rp.Name, ":") {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_skill: name %q must not contain ':' (skills are addressed as '<namespace>:<name>')", rp.Name)
	}
	if !skillNameRE.MatchString(rp.Name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "register_skill: name %q must match [a-zA-Z0-9_-]+", rp.Name)
	}
	if st, err := os.Stat(rp.Path); err != nil || st.IsDir() {
		return nil, protocol.Errorf(protocol.CodeNotFound, "register_skill: skill file not found: %s", rp.Path)
	}
	ns := s.p.Manifest().SkillNamespace
	if ns == "" {
		ns = s.p.Manifest().Name
	}
	s.h.reg.AddSkill(s.p.ID(), registry.Skill{Name: ns + ":" + rp.Name, Path: rp.Path, Description: rp.Description})
	return protocol.RegisterResult{Registered: true}, nil
}

func registerOther(ctx context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	switch rp.Registrar {
	case "register_system_prompt_section":
		return registerPromptSection(ctx, s, rp)
	case "register_redaction_patterns":
		return registerRedactionPatterns(ctx, s, rp)
	case "register_context_reference":
		return registerContextReference(ctx, s, rp)
	case "register_auxiliary_task":
		return registerAuxiliaryTask(ctx, s, rp)
	case "register_platform":
		return registerPlatform(ctx, s, rp)
	case "register_approval_transport":
		return registerApprovalTransport(ctx, s, rp)
	case "register_context_engine":
		return registerContextEngine(ctx, s, rp)
	case "register_memory_provider":
		return registerMemoryProvider(ctx, s, rp)
	case "register_provider":
		return registerModelProvider(ctx, s, rp)
	}
	key := s.p.ID()
	note := "accepted and recorded; not available in this host yet"
	s.h.reg.AddOther(key, registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: note}, rp.Handle, rp.Details)
	s.h.log.Info("plugin registration recorded but not served yet", "plugin", key, "registrar", rp.Registrar, "name", rp.Name)
	return protocol.RegisterResult{Registered: true, Warning: note}, nil
}

func dispose(_ context.Context, s *Session, dp protocol.DisposeParams) (any, error) {
	if err := s.h.reg.Dispose(s.p.ID(), dp.Kind, dp.Key, dp.Handle); err != nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable, "%v", err)
	}
	return map[string]bool{"ok": true}, nil
}

// builtinSlashCommands are the session commands plugins may not take over.
var builtinSlashCommands = map[string]bool{
	"help": true, "plugins": true, "tools": true, "new": true, "quit": true, "exit": true,
	"reset": true, "clear": true, "model": true, "resume": true, "sessions": true, "stop": true,
	"approve": true, "deny": true, "retry": true, "undo": true, "config": true, "skills": true,
	"toolsets": true, "compress": true, "usage": true, "status": true, "verbose": true, "title": true,
}

// builtinCLIVerbs are the top-level `hermes` commands plugins may not take over.
var builtinCLIVerbs = map[string]bool{
	"plugins": true, "tools": true, "config": true, "chat": true, "sessions": true, "help": true,
	"version": true, "completion": true, "demo": true, "gateway": true, "mcp": true, "open-url": true,
	"setup": true, "update": true, "doctor": true, "model": true, "skills": true, "cron": true,
	"memory": true,
}
