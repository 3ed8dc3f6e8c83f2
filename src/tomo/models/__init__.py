"""The gateway: provider-neutral messages, the ``Model`` protocol, and one adapter per provider."""

from tomo.models.base import Model
from tomo.models.messages import (
    Finish,
    Message,
    Reply,
    ReplyDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)

_GATEWAY = ("model_from_spec", "model_for_tier", "detect_default_model")


def __getattr__(name: str) -> object:
    """``from tomo.models import model_from_spec`` without importing httpx and every adapter up front."""
    if name in _GATEWAY:
        from tomo.models import gateway

        return getattr(gateway, name)
    raise AttributeError(f"module 'tomo.models' has no attribute {name!r}")


__all__ = [
    "Finish",
    "Message",
    "Model",
    "Reply",
    "ReplyDone",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "detect_default_model",
    "model_for_tier",
    "model_from_spec",
]
