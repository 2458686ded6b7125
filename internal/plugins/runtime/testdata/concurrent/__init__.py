import json
import threading

_release = threading.Event()


def register(ctx):
    def echo(args, **kwargs):
        # A ctx call from inside a handler: the host answers while this call is open.
        other = ctx.has_plugin(args.get("ask", "nobody"))
        return json.dumps({"n": args.get("n"), "has": other})

    def slow(args, **kwargs):
        # Holds its thread until `release` is called: the other calls must not wait.
        released = _release.wait(float(args.get("seconds", 30)))
        return json.dumps({"released": released})

    def release(args, **kwargs):
        _release.set()
        return json.dumps({"ok": True})

    async def aecho(args, **kwargs):
        return json.dumps({"n": args.get("n"), "async": True})

    ctx.register_tool(name="echo", toolset="t", schema={}, handler=echo)
    ctx.register_tool(name="slow", toolset="t", schema={}, handler=slow)
    ctx.register_tool(name="release", toolset="t", schema={}, handler=release)
    ctx.register_tool(name="aecho", toolset="t", schema={}, handler=aecho, is_async=True)
