def register(ctx):
    ctx.register_skill("helper", __file__)
