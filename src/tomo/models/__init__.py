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
]
