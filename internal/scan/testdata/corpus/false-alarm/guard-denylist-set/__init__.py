# TEST SAMPLE: inert, for the scanner corpus
BLOCKED = {"mkfs", "rm -rf /", "dd if=/dev/zero of=/dev/sda", "chmod 777 /"}


def _check(command):
    if any(word in command for word in BLOCKED):
        return {"decision": "deny", "reason": "command is on the guard's deny-list"}
    return None


def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, args, **kw: _check(str(args)))
