"""hermes-go's stand-in for upstream's agent.memory_provider: the MemoryProvider base
class memory plugins subclass. Names and defaults follow upstream's interface; the
host (hermes) calls these methods through the bridge (memory.* protocol methods)."""

from abc import ABC, abstractmethod
from dataclasses import dataclass

_TRIVIAL = frozenset({
    "hi", "hello", "hey", "thanks", "thank you", "ok", "okay", "yes", "no", "sure", "cool", "great",
    "bye", "goodbye", "yo", "k", "ty", "thx", "np",
})


def is_trivial_prompt(text):
    """True for prompts not worth a recall: greetings, acknowledgements, slash commands."""
    t = (text or "").strip().lower().rstrip("!.?")
    return not t or t.startswith("/") or t in _TRIVIAL


@dataclass
class RecallStatus:
    provider_label: str
    count: int
    glyph: str = "\U0001f9e0"


class MemoryProvider(ABC):
    """An external memory backend: at most one is active beside hermes' built-in memory."""

    # 1: on_pre_compress is advisory; 2 opts into a fail-closed checkpoint.
    pre_compress_checkpoint_api_version = 1

    @property
    @abstractmethod
    def name(self):
        """The provider's name (memory.provider selects it)."""

    @abstractmethod
    def is_available(self):
        """Whether the provider can run here (configured, dependencies present); no network."""

    @abstractmethod
    def initialize(self, session_id, **kwargs):
        """Called once a session starts (kwargs: hermes_home, platform, agent_context, ...)."""

    @abstractmethod
    def get_tool_schemas(self):
        """The provider's tools: [{"name", "description", "parameters"}]."""

    def system_prompt_block(self):
        return ""

    def prefetch(self, query, *, session_id=""):
        return ""

    def queue_prefetch(self, query, *, session_id=""):
        return None

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        return None

    def handle_tool_call(self, tool_name, args, **kwargs):
        import json

        return json.dumps({"error": "Unknown memory tool: %s" % tool_name})

    def shutdown(self):
        return None

    def on_turn_start(self, turn_number, message, **kwargs):
        return None

    def on_session_end(self, messages):
        return None

    def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False, rewound=False, **kwargs):
        return None

    def on_pre_compress(self, messages):
        return ""

    def on_memory_write(self, action, target, content, metadata=None):
        return None

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        return None

    def get_config_schema(self):
        return []

    def save_config(self, values, hermes_home):
        return None

    def backup_paths(self):
        return []

    def recall_status(self):
        return None

    def unavailable_reason(self):
        return ""

    def initialize_for_inspection(self, *args, **kwargs):
        return None
