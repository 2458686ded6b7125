"""`gateway.platforms.base`: BasePlatformAdapter and SendResult, the contract a platform
plugin's adapter implements (upstream's gateway/platforms/base.py, the parts an adapter
uses). Under the Go hermes host the bridge sets the message handler: handle_message()
hands the event to hermes' gateway, which authorises it, runs the agent and calls send()
with the answer."""

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional

from gateway.config import Platform, PlatformConfig  # noqa: F401 - re-exported, as upstream
from gateway.platforms.event import MessageEvent, MessageType  # noqa: F401 - re-exported
from gateway.session import SessionSource

logger = logging.getLogger(__name__)


@dataclass
class SendResult:
    """What send() and its kin answer."""

    success: bool
    message_id: Optional[str] = None
    error: Optional[str] = None
    raw_response: Any = None
    retryable: bool = False
    retry_after: Optional[float] = None


def utf16_len(text):
    """Length in UTF-16 code units (Telegram's limits count these)."""
    return len((text or "").encode("utf-16-le")) // 2


class BasePlatformAdapter(ABC):
    """Base of every platform adapter: connect(), disconnect() and send() are the
    adapter's; the rest is provided."""

    MAX_MESSAGE_LENGTH = 4096

    def __init__(self, config: PlatformConfig, platform: Platform):
        self.config = config
        self.platform = platform
        self._message_handler = None
        self._running = False
        self._fatal_error_code = None
        self._fatal_error_message = None
        self._fatal_error_retryable = True
        self._fatal_error_handler = None
        # Set by the hermes bridge: told of connected/disconnected/fatal changes.
        self._hermes_status = None

    # ---- identity and state
    @property
    def name(self):
        value = getattr(self.platform, "value", self.platform) or type(self).__name__
        return str(value).replace("_", " ").title()

    @property
    def is_connected(self):
        return self._running

    @property
    def has_fatal_error(self):
        return self._fatal_error_code is not None

    @property
    def fatal_error_code(self):
        return self._fatal_error_code

    @property
    def fatal_error_message(self):
        return self._fatal_error_message

    @property
    def fatal_error_retryable(self):
        return self._fatal_error_retryable

    def _status(self, **fields):
        cb = self._hermes_status
        if cb is not None:
            try:
                cb(fields)
            except Exception:  # noqa: BLE001 - a status report never breaks the adapter
                logger.debug("platform status report failed", exc_info=True)

    def _mark_connected(self):
        self._running = True
        self._fatal_error_code = None
        self._fatal_error_message = None
        self._status(connected=True)

    def _mark_disconnected(self):
        was = self._running
        self._running = False
        if was:
            self._status(connected=False)

    def _set_fatal_error(self, code, message, *, retryable):
        self._running = False
        self._fatal_error_code = str(code or "error")
        self._fatal_error_message = str(message or "")
        self._fatal_error_retryable = bool(retryable)
        self._status(connected=False, error_code=self._fatal_error_code, error=self._fatal_error_message,
                     retryable=self._fatal_error_retryable)

    def set_fatal_error_handler(self, handler):
        self._fatal_error_handler = handler

    async def _notify_fatal_error(self):
        handler = self._fatal_error_handler
        if handler is None:
            return
        result = handler(self)
        if hasattr(result, "__await__"):
            await result

    # One gateway per credential is hermes' pid file's job: these always succeed.
    def _acquire_platform_lock(self, scope, identity, description=""):
        return True

    def _release_platform_lock(self):
        return None

    def _wire_plugin_handlers(self, native):
        return None

    # ---- messages in
    def set_message_handler(self, handler):
        self._message_handler = handler

    def build_source(self, chat_id, chat_name=None, chat_type="dm", user_id=None, user_name=None,
                     thread_id=None, chat_topic=None, user_id_alt=None, chat_id_alt=None, is_bot=False,
                     scope_id=None, guild_id=None, parent_chat_id=None, message_id=None, **_ignored):
        return SessionSource(
            platform=self.platform, chat_id=str(chat_id) if chat_id is not None else "", chat_name=chat_name,
            chat_type=chat_type or "dm", user_id=None if user_id is None else str(user_id), user_name=user_name,
            thread_id=None if thread_id is None else str(thread_id), chat_topic=chat_topic,
            user_id_alt=None if user_id_alt is None else str(user_id_alt),
            chat_id_alt=None if chat_id_alt is None else str(chat_id_alt), is_bot=bool(is_bot),
            scope_id=scope_id or guild_id, parent_chat_id=parent_chat_id, message_id=message_id)

    async def handle_message(self, event):
        """Hand an incoming message to the gateway."""
        handler = self._message_handler
        if handler is None:
            logger.debug("%s: no message handler set; message dropped", self.name)
            return None
        result = handler(event)
        if hasattr(result, "__await__"):
            result = await result
        return result

    # ---- messages out
    @abstractmethod
    async def connect(self, *, is_reconnect=False):
        ...

    @abstractmethod
    async def disconnect(self):
        ...

    @abstractmethod
    async def send(self, chat_id, content, reply_to=None, metadata=None):
        ...

    async def send_typing(self, chat_id, metadata=None):
        return None

    async def stop_typing(self, chat_id):
        return None

    async def edit_message(self, chat_id, message_id, content, **kwargs):
        return SendResult(success=False, error="editing messages is not supported by this platform")

    async def send_image(self, chat_id, image_url, caption=None, reply_to=None, metadata=None):
        text = "%s\n%s" % (caption, image_url) if caption else image_url
        return await self.send(chat_id, text, reply_to=reply_to, metadata=metadata)

    async def send_document(self, chat_id, path, caption=None, **kwargs):
        return SendResult(success=False, error="documents are not supported by this platform")

    async def get_chat_info(self, chat_id):
        return {"id": str(chat_id), "chat_id": str(chat_id), "name": str(chat_id), "type": "dm"}

    def format_message(self, content):
        return content

    @staticmethod
    def truncate_message(content, max_length=4096):
        """Split content into chunks of at most max_length characters, at line breaks
        where one is near."""
        content = content or ""
        if max_length <= 0 or len(content) <= max_length:
            return [content]
        chunks = []
        while len(content) > max_length:
            cut = content.rfind("\n", 0, max_length)
            if cut < max_length // 2:
                cut = max_length
            chunks.append(content[:cut])
            content = content[cut:].lstrip("\n")
        if content:
            chunks.append(content)
        return chunks


__all__ = ["BasePlatformAdapter", "SendResult", "MessageEvent", "MessageType", "SessionSource", "utf16_len"]
