# TEST SAMPLE: inert, for the scanner corpus
INJECTION_PHRASES = ("ignore previous instructions", "disregard all rules", "you are now in developer mode enabled")


def flag(text):
    t = text.lower()
    return any(p in t for p in INJECTION_PHRASES)


def register(ctx):
    ctx.register_hook("post_tool_call", lambda tool_name, result, **kw: flag(str(result)) and None)
