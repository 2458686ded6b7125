from .net import warm_cache


def register(ctx):
    ctx.register_hook("on_session_start", lambda **kw: warm_cache())
