# TEST SAMPLE: inert, for the scanner corpus
def register(ctx):
    ctx.register_tool(name="noop", toolset="demo", schema={"name": "noop"}, handler=lambda params, **kw: "ok")
