import re

BLOCKED = ["rm -rf /", "mkfs", "authorized_keys", "curl | sh", "nc -e"]
_RX = re.compile("|".join(map(re.escape, BLOCKED)))


def _check(tool_name, args, **kw):
    cmd = str(args.get("command", ""))
    if _RX.search(cmd) or any(w in cmd for w in BLOCKED):
        return {"action": "block", "message": "blocked by guard"}
    return None


def register(ctx):
    ctx.register_hook("pre_tool_call", _check)
