"""The turn pipeline (A4, A7, G1, H1): admit once, load the conversation once, let the agent answer, record
the turn once, record the gap, apply the channel policy.

This is what every channel calls: the public endpoint, the CLI, the Sandbox, and QA rehearsals (an
in-memory conversation, :class:`Rehearsal`, that remembers its own turns and writes nothing). The agent
itself (``Agent.answer``) writes nothing; gap replay calls it directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from core.agent import prompts
from core.agent.cancel import never
from core.agent.outcome import Fault, Outcome, Status, TurnTrace
from core.agent.protocol import Dialogue
from core.base.language import detect
from core.base.store import Store
from core.channels import conversations, handoff
from core.tenancy import settings as tenant_settings
from core.tenancy.context import SUPPORT_CHANNELS, TenantContext

#: statuses that leave the question on the gap backlog and count toward the support-channel handoff
UNCOVERED = (Status.ABSTAINED, Status.PARTIAL)


@dataclass
class TurnResult:
    """A turn as the channel shows it: the agent's outcome plus what recording it produced."""

    status: Status
    answer: str
    conversation_id: str
    language: str
    citations: list[dict] = field(default_factory=list)
    clarify: list[dict] | None = None
    gap_id: int | None = None
    handoff_id: int | None = None
    truncated: bool = False
    trace: TurnTrace | None = None
    sections: list[dict] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)
    fault: Fault | None = None
    turn_id: int | None = None  # the recorded turn (what answer feedback rates); None when nothing was recorded
    cards: list[dict] = field(default_factory=list)  # the confirmation cards this turn proposed (their `card` events)
    booking_window: dict | None = None  # the free times offered to pick in the widget (the `booking_window` event)

    def as_dict(self) -> dict:
        return {"status": str(self.status), "answer": self.answer, "citations": self.citations,
                "clarify": self.clarify, "gap_id": self.gap_id, "handoff_id": self.handoff_id, "turn_id": self.turn_id,
                "truncated": self.truncated, "conversation_id": self.conversation_id, "language": self.language,
                "sections": self.sections, "followups": self.followups, "cards": self.cards,
                "booking_window": self.booking_window, "trace": self.trace.as_dict() if self.trace else {}}

    @classmethod
    def of(cls, outcome: Outcome, conversation_id: str) -> TurnResult:
        return cls(outcome.status, outcome.answer, conversation_id, outcome.language, citations=outcome.citations,
                   clarify=outcome.clarify, truncated=outcome.truncated, trace=outcome.trace,
                   sections=outcome.sections, followups=outcome.followups, fault=outcome.fault,
                   booking_window=outcome.booking_window)


def hands_off(channel: str, uncovered: int, handed_off: bool) -> bool:
    """The channel policy (A4): the second uncovered question of a support-channel conversation goes to a person."""
    return channel in SUPPORT_CHANNELS and uncovered >= 2 and not handed_off


@dataclass
class Admitted:
    """A message the tenant's settings let in, with the conversation it continues (None: a new one)."""

    message: str
    channel: str
    settings: tenant_settings.TenantSettings
    conversation_id: str | None = None
    conversation: conversations.Conversation | None = None


def admit(ctx: TenantContext, store: Store, message: str, channel: str = "web",
          conversation_id: str | None = None) -> Admitted:
    """Check the message and the channel once (S2, A7); raises ConversationError / ChannelDisabled.

    A continued conversation keeps the channel it was opened on, so that is the one checked."""
    message = conversations.check_message(message)
    conversation = conversations.get(ctx, store, conversation_id) if conversation_id else None
    settings = tenant_settings.get(ctx, store)
    tenant_settings.refuse_disabled(settings, conversation.channel if conversation else channel)
    return Admitted(message, channel, settings, conversation_id, conversation)


@dataclass
class Rehearsal:
    """A conversation kept in memory, for QA runs (Q2): a dry run that remembers its own turns.

    Earlier turns feed the history (so follow-ups are rewritten from them), their evidence stays citable and
    uncovered questions count toward the handoff rule, exactly as in a stored conversation; but nothing is
    written: no conversation, turn, gap or handoff. A handoff the rule calls for is reported on the result
    (status ``handoff``, ``handoff_id`` None, ``trace.handoff`` with ``recorded: False``), not queued."""

    channel: str = "web"
    turns: list[tuple[str, str]] = field(default_factory=list)  # (question, answer), oldest first
    evidence: list[str] = field(default_factory=list)
    uncovered: int = 0
    handed_off: bool = False
    id: str = "rehearsal"

    def history(self) -> list[tuple[str, str]]:
        """As ``conversations.history``: the last exchanges as (role, text) pairs."""
        out: list[tuple[str, str]] = []
        for question, answer in self.turns[-conversations.MAX_HISTORY_TURNS:]:
            out.append(("user", question))
            if answer:
                out.append(("assistant", answer))
        return out

    def dialogue(self) -> Dialogue:
        return Dialogue(self.channel, tuple(self.history()), tuple(self.evidence))


class Turns:
    """Runs turns for every channel over the services of one process: ``store``, the ``backlog`` that records
    gaps and the ``notifier`` that announces handoffs (the runtime has them; they are read at each turn)."""

    def __init__(self, services: Any) -> None:
        self.services = services

    @property
    def store(self) -> Store:
        return self.services.store

    @property
    def backlog(self) -> Any:
        return self.services.backlog

    @property
    def notifier(self) -> Any:
        return self.services.notifier

    def admit(self, ctx: TenantContext, message: str, channel: str = "web",
              conversation_id: str | None = None) -> Admitted:
        return admit(ctx, self.store, message, channel, conversation_id)

    def run(self, ctx: TenantContext, agent, message: str, *, conversation_id: str | None = None, channel: str = "web",
            cancelled: Callable[[], bool] = never, on_event: Callable[[str, dict], None] | None = None) -> TurnResult:
        """Admit, answer and record one message (``conversation_id`` None: a new conversation on ``channel``)."""
        return self.run_admitted(ctx, agent, self.admit(ctx, message, channel, conversation_id),
                                 cancelled=cancelled, on_event=on_event)

    def run_admitted(self, ctx: TenantContext, agent, admitted: Admitted, *, cancelled: Callable[[], bool] = never,
                     on_event: Callable[[str, dict], None] | None = None) -> TurnResult:
        """The turn of a message already admitted (the endpoint admits before it opens the stream).

        With the kill switch on the turn answers a fixed message and nothing else runs: no provider, no tool,
        no gap, no record."""
        if admitted.settings.kill_switch:
            return switched_off(admitted)
        convo = self._conversation(ctx, admitted)
        dialogue = Dialogue(convo.channel, tuple(conversations.history(ctx, self.store, convo.id)),
                            tuple(conversations.evidence_ids(ctx, self.store, convo.id)), convo.id)
        outcome = agent.answer(ctx, dialogue, admitted.message, settings=admitted.settings, cancelled=cancelled,
                               on_event=on_event)
        result = TurnResult.of(outcome, convo.id)
        if outcome.cards:  # the only thing a write tool leaves: a card, recorded once the answer is settled (C1)
            result.cards = [card.event() for card in self.services.actions.record(ctx, convo.id, outcome.cards)]
        uncovered = result.status in UNCOVERED
        if uncovered:
            result.gap_id = self.backlog.record(ctx, admitted.message, result.language, convo.channel, convo.id,
                                                str(outcome.abstention))
            _mention_gap(result)
        waiting = handoff.open_for(ctx, self.store, convo.id) is not None  # the team has it already: no second one
        reason = _handoff_reason(outcome, convo.channel, convo.uncovered + int(uncovered), waiting)
        if reason:
            _hand_over(result, reason, outcome)
        result.turn_id = conversations.record_turn(
            ctx, self.store, convo.id, question=admitted.message, status=str(result.status), answer=result.answer,
            citations=result.citations, evidence=outcome.evidence_ids, truncated=result.truncated,
            provider=outcome.trace.provider, model=outcome.trace.model, latency_ms=outcome.trace.latency_ms,
            input_tokens=outcome.trace.input_tokens, output_tokens=outcome.trace.output_tokens,
            trace=outcome.trace.as_dict(), uncovered=uncovered)
        if reason and not waiting:  # queued after the turn is stored, so its transcript includes the turn
            result.handoff_id = handoff.create(ctx, self.store, convo.id, reason,
                                               result.gap_id if reason.startswith("not_covered") else None)
            outcome.trace.handoff = {"id": result.handoff_id, "reason": reason}
            self.notifier.handoff_created(ctx, result.handoff_id)
        return result

    def rehearse(self, ctx: TenantContext, agent, rehearsal: Rehearsal, message: str) -> TurnResult:
        """A turn of an in-memory conversation (QA runs): the same answer and policy, nothing written."""
        message = conversations.check_message(message)
        settings = tenant_settings.get(ctx, self.store)
        outcome = agent.answer(ctx, rehearsal.dialogue(), message, settings=settings)
        result = TurnResult.of(outcome, rehearsal.id)
        result.cards = [{**card, "id": None, "status": "not_recorded"} for card in outcome.cards]  # a dry run
        outcome.trace.rehearsal = True
        uncovered = result.status in UNCOVERED
        if uncovered:
            _mention_gap(result)
        rehearsal.turns.append((message, result.answer))
        rehearsal.evidence = list(dict.fromkeys([*rehearsal.evidence, *outcome.evidence_ids]))
        rehearsal.uncovered += int(uncovered)
        reason = _handoff_reason(outcome, rehearsal.channel, rehearsal.uncovered, rehearsal.handed_off)
        if reason:
            _hand_over(result, reason, outcome)
            rehearsal.handed_off = True
            outcome.trace.handoff = {"reason": reason, "recorded": False}
        return result

    def _conversation(self, ctx: TenantContext, admitted: Admitted) -> conversations.Conversation:
        if admitted.conversation is not None:
            return admitted.conversation
        if admitted.conversation_id:
            return conversations.require(ctx, self.store, admitted.conversation_id)
        admitted.conversation = conversations.start(ctx, self.store, admitted.channel)
        return admitted.conversation


def _handoff_reason(outcome: Outcome, channel: str, uncovered: int, handed_off: bool) -> str | None:
    """Why this turn goes to a person, if it does: the second uncovered question of a support channel, or the
    model's own request (never after a fault)."""
    if outcome.status in UNCOVERED and hands_off(channel, uncovered, handed_off):
        return "not_covered_twice"
    if outcome.handoff_requested and outcome.fault is None:
        return outcome.handoff_requested
    return None


def _hand_over(result: TurnResult, reason: str, outcome: Outcome) -> None:
    if reason == "not_covered_twice":
        result.answer = f"{result.answer} {prompts.message('handoff', result.language)}"
    result.status = Status.HANDOFF
    outcome.trace.handoff = {"reason": reason}


def _mention_gap(result: TurnResult) -> None:
    """An abstention says the question was logged only when it was (a rehearsal, or masking failed: not)."""
    if result.gap_id is None and result.status == Status.ABSTAINED:
        result.answer = result.answer.split(". ")[0] + "."


def switched_off(admitted: Admitted) -> TurnResult:
    language = detect(admitted.message)
    trace = TurnTrace(admitted.channel, language, fault="kill_switch")
    return TurnResult(Status.ERROR, prompts.message("switched_off", language), admitted.conversation_id or "",
                      language, trace=trace, fault=Fault.KILL_SWITCH)
