"""`gateway.config`: the Platform enum and PlatformConfig, as platform plugins use them."""

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Optional


class Platform(Enum):
    """The platform ids upstream knows; a plugin's own name (Platform("irc")) becomes a
    member when first asked for, as upstream makes registered names dynamic members."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    WHATSAPP = "whatsapp"
    WHATSAPP_CLOUD = "whatsapp_cloud"
    SLACK = "slack"
    SIGNAL = "signal"
    MATTERMOST = "mattermost"
    MATRIX = "matrix"
    HOMEASSISTANT = "homeassistant"
    EMAIL = "email"
    SMS = "sms"
    DINGTALK = "dingtalk"
    API_SERVER = "api_server"
    WEBHOOK = "webhook"
    MSGRAPH_WEBHOOK = "msgraph_webhook"
    FEISHU = "feishu"
    WECOM = "wecom"
    WECOM_CALLBACK = "wecom_callback"
    WEIXIN = "weixin"
    BLUEBUBBLES = "bluebubbles"
    QQBOT = "qqbot"
    YUANBAO = "yuanbao"
    RELAY = "relay"

    @classmethod
    def _missing_(cls, value):
        if not isinstance(value, str) or not value.strip():
            return None
        name = value.strip().lower()
        existing = cls._value2member_map_.get(name)
        if existing is not None:
            return existing
        member = object.__new__(cls)
        member._name_ = name.upper().replace("-", "_")
        member._value_ = name
        cls._value2member_map_[name] = member
        return member


@dataclass
class HomeChannel:
    platform: Any = None
    chat_id: str = ""
    name: str = "Home"
    thread_id: Optional[str] = None


@dataclass
class PlatformConfig:
    """One platform's settings: platforms.<name> of config.yaml (extra is
    platforms.<name>.extra)."""

    enabled: bool = False
    token: Optional[str] = None
    api_key: Optional[str] = None
    home_channel: Optional[HomeChannel] = None
    reply_to_mode: str = "first"
    extra: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self):
        out = {"enabled": self.enabled, "extra": dict(self.extra), "reply_to_mode": self.reply_to_mode}
        if self.token:
            out["token"] = self.token
        if self.api_key:
            out["api_key"] = self.api_key
        return out

    @classmethod
    def from_dict(cls, data):
        data = dict(data or {})
        return cls(enabled=bool(data.get("enabled", False)), token=data.get("token"), api_key=data.get("api_key"),
                   reply_to_mode=data.get("reply_to_mode") or "first", extra=dict(data.get("extra") or {}))
