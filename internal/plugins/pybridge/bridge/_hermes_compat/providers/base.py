"""hermes-go's stand-in for upstream's providers/base.py: the ProviderProfile a
model-provider plugin builds (or subclasses to override hooks). hermes reads the
fields once at registration; the hooks a subclass overrides are called through the
plugin protocol (model_provider.call)."""

from dataclasses import dataclass, field


class _Omit:
    def __repr__(self):
        return "OMIT_TEMPERATURE"


# fixed_temperature = OMIT_TEMPERATURE: send no temperature at all.
OMIT_TEMPERATURE = _Omit()


@dataclass
class ProviderProfile:
    name: str
    api_mode: str = "chat_completions"
    aliases: tuple = ()
    display_name: str = ""
    description: str = ""
    signup_url: str = ""
    env_vars: tuple = ()
    base_url: str = ""
    models_url: str = ""
    auth_type: str = "api_key"
    supports_health_check: bool = True
    supports_vision: bool = False
    supports_vision_tool_messages: bool = True
    supports_vision_user_messages: bool = True
    supports_prompt_cache_key: bool = False
    fallback_models: tuple = ()
    hostname: str = ""
    default_headers: dict = field(default_factory=dict)
    fixed_temperature: object = None
    default_max_tokens: object = None
    default_aux_model: str = ""

    def get_hostname(self):
        return self.hostname

    def prepare_messages(self, messages):
        return messages

    def build_extra_body(self, *, session_id=None, **context):
        return {}

    def build_api_kwargs_extras(self, *, reasoning_config=None, **context):
        return {}, {}

    def default_vision_model(self):
        return None

    def get_max_tokens(self, model):
        return self.default_max_tokens

    def fetch_models(self, *, api_key=None, base_url=None, timeout=8.0):
        """None: the host lists {models_url or base_url}/models itself."""
        return None
