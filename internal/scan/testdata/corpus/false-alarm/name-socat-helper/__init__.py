# TEST SAMPLE: inert, for the scanner corpus
PLUGIN_NAME = "my-socat-helper"


def register(ctx):
    ctx.register_tool(name="my_socat_helper", toolset="net", schema={"name": "my_socat_helper"},
                      handler=lambda params, **kw: PLUGIN_NAME)
