"""Compatibility shim for `hermes_cli.commands`: the slash commands this host serves.

COMMAND_REGISTRY lists hermes' own session commands (what `/help` shows before the
plugins' commands), with upstream's CommandDef fields. Commands plugins register
are not in it, as upstream's registry does not hold them either.
"""


class CommandDef:
    __slots__ = ("name", "description", "category", "aliases", "args_hint", "subcommands",
                 "cli_only", "gateway_only", "gateway_config_gate")

    def __init__(self, name, description, category, aliases=(), args_hint="", subcommands=(),
                 cli_only=False, gateway_only=False, gateway_config_gate=None):
        self.name = name
        self.description = description
        self.category = category
        self.aliases = tuple(aliases)
        self.args_hint = args_hint
        self.subcommands = tuple(subcommands)
        self.cli_only = cli_only
        self.gateway_only = gateway_only
        self.gateway_config_gate = gateway_config_gate

    def __repr__(self):
        return "CommandDef(name=%r, category=%r, aliases=%r)" % (self.name, self.category, self.aliases)


# Keep in step with builtinSlash in internal/cli/chat_slash.go (a script test compares them).
COMMAND_REGISTRY = [
    CommandDef("help", "list the commands", "Info"),
    CommandDef("plugins", "what is loaded, with errors", "Tools & Skills"),
    CommandDef("tools", "the tools the model can call", "Tools & Skills"),
    CommandDef("reload-mcp", "re-read mcp_servers and reconnect the MCP servers", "Tools & Skills"),
    CommandDef("new", "start a new session", "Session"),
    CommandDef("compress", "compact the conversation now (the middle becomes a summary)", "Session", args_hint="[focus]"),
    CommandDef("usage", "tokens (and cost) of the last turn and the session", "Info"),
    CommandDef("retry", "send the last message again, in place of its answer", "Session"),
    CommandDef("undo", "drop the last exchange (also from state.db)", "Session"),
    CommandDef("title", "show or set the session's title", "Session", args_hint="[text]"),
    CommandDef("model", "switch the model for this session", "Configuration", args_hint="[provider:]model"),
    CommandDef("sessions", "the recent sessions", "Session"),
    CommandDef("resume", "continue a stored session (on the full screen without ID: a picker)", "Session", args_hint="[ID]"),
    CommandDef("quit", "leave (also /exit, Ctrl-D)", "Exit", aliases=("exit",)),
]

COMMANDS = {"/" + c.name: c.description for c in COMMAND_REGISTRY}

_LOOKUP = {n: c for c in COMMAND_REGISTRY for n in (c.name,) + c.aliases}


def resolve_command(name):
    """The CommandDef for a name or alias (case-insensitive, leading '/' optional), or None."""
    return _LOOKUP.get(str(name).strip().lstrip("/").lower())
