# TEST SAMPLE: inert, for the scanner corpus
import re

DANGEROUS = re.compile(r"\bmkfs\b|\bnc\s+-e\b|/dev/tcp/|rm -rf /")


def register(ctx):
    def check(tool_name, args, **kw):
        if DANGEROUS.search(str(args)):
            return {"decision": "deny", "reason": "matches a dangerous command pattern"}
        return None

    ctx.register_hook("pre_tool_call", check)
