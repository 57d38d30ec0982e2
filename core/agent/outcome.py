"""What answering one question produced (A3, A8): the typed status and fault, the released answer, the trace.

``Agent.answer`` returns an :class:`Outcome` and writes nothing; the turn pipeline (``core.channels.turn``)
records it and applies the channel policy. Statuses and faults are enums so that no layer recognises a
result by matching words of a message.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Status(StrEnum):
    ANSWERED = "answered"
    ABSTAINED = "abstained"
    PARTIAL = "partial"  # the material covers the topic, not the point asked: said first, then the closest facts
    HANDOFF = "handoff"
    CLARIFY = "clarify"
    CARD = "card"  # a write tool proposed a confirmation card: nothing changes until a person approves it
    ERROR = "error"


class Fault(StrEnum):
    """Why a turn could not be answered at all (never a gap: G4)."""

    KILL_SWITCH = "kill_switch"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    TRUNCATED = "truncated"  # the wall-clock budget ran out
    TOOLS_FAILED = "tools_failed"  # every tool call failed: nothing was looked up


class Abstention(StrEnum):
    NOT_COVERED = "not_covered"
    WITHHELD_UNSUPPORTED = "withheld_unsupported"
    PARTIAL = "partial"  # answered in part; the missing point is still a gap


@dataclass
class TurnTrace:
    """Everything a turn leaves for the Sandbox and the private log (A8); ``as_dict`` is what is stored."""

    channel: str
    language: str
    rounds: list[dict] = field(default_factory=list)
    gate: list[dict] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)
    hits: list[dict] = field(default_factory=list)
    provider: str = ""
    model: str = ""
    latency_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    provider_ms: int = 0
    attempts: list = field(default_factory=list)
    fault: str | None = None  # the fault's detail, for people (``Outcome.fault`` is the code)
    abstained: str | None = None
    missing: list | None = None  # a partial answer: what the material does not mention
    handoff_requested: str | None = None
    handoff: dict | None = None
    rehearsal: bool = False

    _OPTIONAL = ("fault", "abstained", "missing", "handoff_requested", "handoff")

    def as_dict(self) -> dict:
        out = {"channel": self.channel, "language": self.language, "rounds": self.rounds, "gate": self.gate,
               "tools": self.tools, "hits": self.hits, "provider": self.provider, "model": self.model,
               "latency_ms": self.latency_ms, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
               "provider_ms": self.provider_ms, "attempts": self.attempts}
        out.update({key: getattr(self, key) for key in self._OPTIONAL if getattr(self, key) is not None})
        if self.rehearsal:
            out["rehearsal"] = True
        return out


@dataclass
class Outcome:
    """The agent's answer to one question, after the gate; nothing of it has been recorded."""

    status: Status
    answer: str
    language: str
    trace: TurnTrace
    fault: Fault | None = None
    citations: list[dict] = field(default_factory=list)
    clarify: list[dict] | None = None
    sections: list[dict] = field(default_factory=list)  # page sections to point at (H2): {id, description}
    followups: list[str] = field(default_factory=list)  # related questions the knowledge base answers
    truncated: bool = False
    evidence_ids: list[str] = field(default_factory=list)  # every citable id the tools returned this turn
    handoff_requested: str | None = None  # the reason, when the model handed the conversation to a person
    abstention: Abstention | None = None
    cards: list[dict] = field(default_factory=list)  # card proposals of this turn (recorded by the turn pipeline)
    booking_window: dict | None = None  # the free times to pick from in the widget (its booking_window event)
