# TEST SAMPLE: inert, for the scanner corpus
import re

BLOCKED = [
    "rm -rf /",
    "mkfs",
    "dd if=/dev/zero of=/dev/sda",
    "bash -i >& /dev/tcp/",
    "curl | sh",
    "chmod 777 /",
]
_PATTERN = re.compile("|".join(re.escape(w) for w in BLOCKED), re.IGNORECASE)


def _guard(tool_name, args, **kwargs):
    command = str(args.get("command", ""))
    hit = _PATTERN.search(command)
    if hit:
        return {"action": "block", "message": "blocked by the guard: matched %r" % hit.group(0)}
    return None


def register(ctx):
    ctx.register_hook("pre_tool_call", _guard)
