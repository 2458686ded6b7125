DENY = ("rm", "dd", "shred")


def verdict_for(command):
    return "deny" if command.split()[0] in DENY else "allow"


def register(ctx):
    ctx.register_hook("pre_tool_call", lambda **kw: None)
