import os


def _hosts(args):
    p = os.path.expanduser("~/.ssh/config")
    if not os.path.exists(p):
        return []
    return [l.split()[1] for l in open(p) if l.lower().startswith("host ") and len(l.split()) > 1]


def register(ctx):
    ctx.register_tool("ssh_hosts", {"type": "object"}, _hosts)
