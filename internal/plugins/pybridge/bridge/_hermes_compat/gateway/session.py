"""`gateway.session`: SessionSource, where a message came from."""

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class SessionSource:
    platform: Any = None
    chat_id: str = ""
    chat_name: Optional[str] = None
    chat_type: str = "dm"
    user_id: Optional[str] = None
    user_name: Optional[str] = None
    thread_id: Optional[str] = None
    chat_topic: Optional[str] = None
    user_id_alt: Optional[str] = None
    chat_id_alt: Optional[str] = None
    is_bot: bool = False
    scope_id: Optional[str] = None
    parent_chat_id: Optional[str] = None
    message_id: Optional[str] = None

    @property
    def guild_id(self):
        return self.scope_id

    def to_dict(self):
        platform = getattr(self.platform, "value", self.platform)
        out = {
            "platform": platform, "chat_id": self.chat_id, "chat_name": self.chat_name,
            "chat_type": self.chat_type, "user_id": self.user_id, "user_name": self.user_name,
            "thread_id": self.thread_id, "chat_topic": self.chat_topic,
        }
        for key in ("user_id_alt", "chat_id_alt", "is_bot", "scope_id", "parent_chat_id", "message_id"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.scope_id:
            out["guild_id"] = self.scope_id
        return out
