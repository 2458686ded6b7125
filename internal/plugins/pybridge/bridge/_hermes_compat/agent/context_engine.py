"""hermes-go's stand-in for upstream's agent/context_engine.py: the ContextEngine base
class a context-engine plugin subclasses. The host calls the methods through the plugin
protocol (context_engine.call) with the keyword arguments each signature takes."""

import json
from abc import ABC, abstractmethod


class ContextEngine(ABC):
    """Decides when the conversation is compacted and how. Subclasses set `name` and
    implement update_from_response, should_compress and compress."""

    # Tuning (upstream's defaults); the host reads them with get_status().
    threshold_percent = 0.75
    protect_first_n = 3
    protect_last_n = 6
    emit_automatic_compaction_status = True

    def __init__(self):
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.threshold_tokens = 0
        self.context_length = 0
        self.compression_count = 0

    @property
    @abstractmethod
    def name(self):
        """The engine's name: what context.engine selects."""

    @abstractmethod
    def update_from_response(self, usage):
        """Record the token usage the model reported (prompt_tokens, completion_tokens, ...)."""

    @abstractmethod
    def should_compress(self, prompt_tokens=None):
        """Whether the conversation should be compacted before the next call."""

    @abstractmethod
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False, memory_context=""):
        """Return the compacted list of messages."""

    # -- optional, with upstream's defaults
    def update_model(self, model, context_length, base_url="", api_key="", provider="", **kwargs):
        self.context_length = int(context_length or 0)
        self.threshold_tokens = int(self.context_length * self.threshold_percent)

    def should_compress_preflight(self, messages):
        return False

    def has_content_to_compress(self, messages):
        return True

    def on_session_start(self, session_id, **kwargs):
        pass

    def on_session_end(self, session_id, messages):
        pass

    def on_session_reset(self):
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0

    def get_tool_schemas(self):
        return []

    def handle_tool_call(self, name, args, **kwargs):
        return json.dumps({"error": "Unknown context engine tool: %s" % name})

    def get_status(self):
        usage = 0.0
        if self.context_length:
            usage = round(100.0 * self.last_prompt_tokens / self.context_length, 1)
        return {"last_prompt_tokens": self.last_prompt_tokens, "threshold_tokens": self.threshold_tokens,
                "context_length": self.context_length, "usage_percent": usage,
                "compression_count": self.compression_count}


def sanitize_memory_context(text, limit=6000, head=4000, tail=1500):
    """Cap memory context handed to an engine as upstream does (head + tail)."""
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:head] + "\n[...]\n" + text[-tail:]
