"""The provider-neutral conversation format every provider speaks (A1).

Providers translate these records to and from their own wire formats; the tool loop, the offline
responder and the test doubles only ever see these.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description written for the model, JSON-schema parameters. ``kind``
    (the tool's kind: ``read``/``write`` for an operation) and ``examples`` (its example phrasings) are for the
    offline responder; providers send only the first three."""

    name: str
    description: str
    parameters: dict
    kind: str = ""
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict


@dataclass(frozen=True)
class Message:
    """One entry of the conversation sent to a provider.

    role "user": ``content`` is the visitor's (or the loop's) text.
    role "assistant": ``content`` is the model's text, ``tool_calls`` the calls it made.
    role "tool": the result of one call; ``tool_call_id`` and ``name`` say which; ``content`` is the
    result as text (JSON), ``is_error`` marks a failed tool.
    """

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """What a provider answered for one round: text and/or tool calls."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    provider: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "end"  # end | tool_use | max_tokens


class TransportError(RuntimeError):
    """The provider could not be reached, timed out, or failed on its side (5xx, overload).

    Nothing is released before the gate, so the chain may safely try the next provider.
    """


class Provider(Protocol):
    name: str
    model: str

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int = 1024,
        timeout: float = 60.0,
    ) -> Reply: ...


@dataclass(frozen=True)
class Dialogue:
    """What the agent sees of a conversation: its channel, the last exchanges as (role, text) pairs, and the
    ids earlier turns cited or read (still citable). Stored and in-memory conversations both give one."""

    channel: str = "web"
    history: tuple[tuple[str, str], ...] = ()
    evidence_ids: tuple[str, ...] = ()
    conversation_id: str = ""
