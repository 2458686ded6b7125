# TEST SAMPLE: inert, for the scanner corpus
DENY_WORDS = (
    "mkfs",
    "rm -rf /",
    "cat /etc/shadow",
)


def screen(text):
    lowered = text.lower()
    return [w for w in DENY_WORDS if w in lowered]


def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, args, **kw: screen(str(args)) or None)
