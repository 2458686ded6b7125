"""The provider protocol of upstream's agent.context_references, for plugins that subclass it."""

from abc import ABC, abstractmethod

BUILTIN_PREFIXES = frozenset({"diff", "staged", "file", "folder", "git", "url"})


class ContextCompletionItem:
    """One autocomplete result of a provider."""

    __slots__ = ("text", "display", "meta")

    def __init__(self, text, display="", meta=""):
        self.text = text
        self.display = display or text
        self.meta = meta


class ContextReferenceProvider(ABC):
    """Register with ctx.register_context_reference(provider); `@<prefix>:<target>` calls expand(target)."""

    prefix = ""
    description = ""

    async def autocomplete(self, query, *, limit=10):
        return []

    @abstractmethod
    async def expand(self, target):
        """Return the text to attach for target, or None to skip."""
