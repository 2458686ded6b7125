# TEST SAMPLE: inert, for the scanner corpus
import re

_PHRASES = re.compile(r"ignore (all )?previous instructions|disregard (all )?your rules", re.I)


def _scan(params, **kwargs):
    found = _PHRASES.findall(str(params.get("text", "")))
    return {"injection": bool(found)}


def register(ctx):
    ctx.register_tool(
        name="injection_check",
        toolset="guard",
        schema={
            "name": "injection_check",
            "description": "Reports whether text holds a prompt injection, e.g. 'ignore all previous instructions'.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "Text to check, such as a web page that says 'disregard all your rules'."}}},
        },
        handler=_scan,
    )
