"""The tool loop (A1-A8): provider <-> tools, the whole answer buffered, the gate, one revision round,
abstention and the channel policy, the trace.

Nothing reaches the customer before the gate has judged the whole answer; an answer that still has an
unsupported claim after the revision round is withheld whole and the turn abstains.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from core.channels import conversations
from core.channels import handoff
from core.knowledge import sources as sources_mod
from core.tenancy import settings as tenant_settings
from core.agent import prompts
from core.agent.cancel import Cancelled, cancellable_call, never
from core.agent.followups import followups
from core.agent.protocol import Message, Provider, Reply, TransportError
from core.agent.tools import Tool, Toolbox, TurnEvidence
from core.grounding.gate import Evidence, check, release
from core.base.language import detect
from core.runtime import Runtime
from core.tenancy.context import TenantContext

MAX_ROUNDS = 6
DEFAULT_BUDGET_SECONDS = 60.0


@dataclass
class TurnResult:
    status: str  # answered | abstained | handoff | clarify | error
    answer: str
    conversation_id: str
    language: str
    citations: list[dict] = field(default_factory=list)
    clarify: list[dict] | None = None
    gap_id: int | None = None
    handoff_id: int | None = None
    truncated: bool = False
    trace: dict = field(default_factory=dict)
    sections: list[dict] = field(default_factory=list)  # page sections to point at (H2): {id, description}
    followups: list[str] = field(default_factory=list)  # related questions the knowledge base answers

    def as_dict(self) -> dict:
        return {"status": self.status, "answer": self.answer, "citations": self.citations, "clarify": self.clarify,
                "gap_id": self.gap_id, "handoff_id": self.handoff_id, "truncated": self.truncated,
                "conversation_id": self.conversation_id, "language": self.language, "sections": self.sections,
                "followups": self.followups, "trace": self.trace}


def hands_off(channel: str, uncovered: int, handed_off: bool) -> bool:
    """The channel policy (A4): the second uncovered question of a support-channel conversation goes to a person."""
    return channel in conversations.SUPPORT_CHANNELS and uncovered >= 2 and not handed_off


@dataclass
class Rehearsal:
    """A conversation kept in memory, for QA runs (Q2): a dry run that remembers its own turns.

    Earlier turns feed the history (so follow-ups are rewritten from them), their evidence stays citable and
    uncovered questions count toward the handoff rule, exactly as in a stored conversation; but nothing is
    written: no conversation, turn, gap or handoff. A handoff the rule calls for is reported on the result
    (status ``handoff``, ``handoff_id`` None, ``trace["handoff"]``), not queued."""

    channel: str = "web"
    turns: list[tuple[str, str]] = field(default_factory=list)  # (question, answer), oldest first
    evidence: list[str] = field(default_factory=list)
    uncovered: int = 0
    handed_off: bool = False
    id: str = "rehearsal"

    def history(self) -> list[tuple[str, str]]:
        """As ``conversation.history``: the last exchanges as (role, text) pairs."""
        out: list[tuple[str, str]] = []
        for question, answer in self.turns[-conversations.MAX_HISTORY_TURNS:]:
            out.append(("user", question))
            if answer:
                out.append(("assistant", answer))
        return out


class Agent:
    """Answers one question of a conversation with a provider, the tools and the gate."""

    def __init__(self, rt: Runtime, provider: Provider, *, budget_seconds: float = DEFAULT_BUDGET_SECONDS,
                 clock: Callable[[], float] = time.monotonic, extra_tools: Sequence[Tool] = (), tenant_name: str = "",
                 call_timeout: float = 60.0):
        self.rt, self.provider, self.budget, self.clock = rt, provider, budget_seconds, clock
        self.call_timeout = call_timeout
        self.extra_tools, self.tenant_name = list(extra_tools), tenant_name

    def ask(self, ctx: TenantContext, question: str, conversation_id: str | None = None, channel: str = "web",
            cancelled: Callable[[], bool] = never, record: bool = True,
            rehearsal: Rehearsal | None = None, on_event: Callable[[str, dict], None] | None = None) -> TurnResult:
        """Answer one message. ``record=False`` is a dry run (gap replay): the same tools and gate, but no
        conversation, turn, gap or handoff is written. A ``rehearsal`` (QA runs) is a dry run in an in-memory
        conversation: see :class:`Rehearsal`. ``on_event(name, data)`` hears the turn's progress as it happens
        (``provider`` when a provider answers a round, ``tool`` after each call); nothing of the answer goes
        through it: the answer exists only in the result, after the gate. ``cancelled`` is polled before every
        provider round and tool call; when it turns true the turn raises :class:`Cancelled` and records nothing."""
        question = conversations.check_message(question)
        record = record and rehearsal is None
        # tenant settings (S2): a disabled channel is refused (ChannelDisabled); with the kill switch on the
        # turn answers a fixed message and nothing else runs: no provider, no tool, no gap. Dry runs are exempt.
        settings = (tenant_settings.admit(ctx, self.rt.store, channel, conversation_id) if record
                    else tenant_settings.get(ctx, self.rt.store))
        if record and settings.kill_switch:
            language = detect(question)
            return TurnResult("error", prompts.message("switched_off", language), conversation_id or "", language,
                              trace={"channel": channel, "language": language, "fault": "kill_switch", "rounds": [],
                                     "gate": [], "tools": [], "provider": "", "model": "", "latency_ms": 0})
        started = self.clock()
        store = self.rt.store
        if rehearsal is not None:
            convo = conversations.Conversation(rehearsal.id, rehearsal.channel, None, "", rehearsal.uncovered,
                                               rehearsal.handed_off)
        elif not record:
            convo = conversations.Conversation("dry-run", channel, None, "", 0, False)
        elif conversation_id:
            convo = conversations.require(ctx, store, conversation_id)
        else:
            convo = conversations.start(ctx, store, channel)
        if record:
            history, earlier = conversations.history(ctx, store, convo.id), conversations.evidence_ids(ctx, store, convo.id)
        else:  # a dry run starts from nothing, a rehearsal from its own earlier turns
            history, earlier = (rehearsal.history(), list(rehearsal.evidence)) if rehearsal else ([], [])
        language = detect(question)
        evidence = TurnEvidence()
        evidence.texts.update({cid: c.text for cid, c in self.rt.index.chunks(ctx, earlier).items()})
        toolbox = Toolbox(self.rt, ctx, history, evidence, self.extra_tools, reasons=dict(settings.handoff_reasons),
                          sections=dict(settings.sections))
        emit = on_event or (lambda name, data: None)
        system = prompts.system_prompt(self.tenant_name or ctx.tenant_slug, language)
        messages = [Message(role, text) for role, text in history] + [Message("user", question)]
        trace: dict = {"channel": convo.channel, "language": language, "rounds": [], "gate": [], "tools": evidence.calls,
                       "hits": evidence.hits}
        usage = {"input_tokens": 0, "output_tokens": 0, "provider_ms": 0}
        status, answer, truncated, fault = "", "", False, None
        verdict = None
        try:
            for attempt in range(2):  # the answer, then at most one revision
                text = self._run_rounds(system, messages, toolbox, usage, trace, started, cancelled, emit)
                if evidence.clarify is not None:
                    status = "clarify"
                    break
                verdict = check(text, Evidence(dict(evidence.texts), frozenset(evidence.other_ids), tuple(evidence.live)),
                                prompts.exempt_sentences())
                trace["gate"].append({"round": attempt, "ok": verdict.ok, "claims": [
                    {"claim": v.claim.text, "citations": list(v.claim.citations), "verdict": v.verdict, "detail": v.detail,
                     "support": round(v.support, 3)} for v in verdict.claims]})
                if verdict.ok:
                    status, answer = "answered", text
                    break
                if evidence.handoff:  # a person takes over: the fixed handoff message replaces it, no revision
                    break
                if attempt == 0:
                    messages += [Message("assistant", text), Message("user", prompts.revision_request(verdict.feedback()))]
        except TransportError as exc:
            fault = f"provider unavailable: {exc}"
        except TimeoutError:
            truncated, fault = True, "wall-clock budget exhausted"
        latency_ms = int((self.clock() - started) * 1000)
        result = TurnResult(status or "abstained", "", convo.id, language, truncated=truncated)
        if not fault and status not in ("answered", "clarify") and evidence.faults and not evidence.texts:
            fault = "every tool call failed"  # nothing was looked up: a fault, never a gap (G4)
        if fault:
            result.status, result.answer = "error", prompts.message("truncated" if truncated else "fault", language)
            trace["fault"] = fault
        elif status == "clarify":
            result.answer, result.clarify = "\n".join(q["question"] for q in evidence.clarify or []), evidence.clarify
        elif status == "answered":
            result.answer, ids = release(answer)
            result.citations = self._citations(ctx, ids)
            result.followups = followups(evidence.hits, ids, question, language)
        elif evidence.handoff:  # the model handed over: a person takes it, whatever it wrote; no gap
            result.status, result.answer = "handoff", prompts.message("handoff", language)
        else:
            self._abstain(ctx, result, question, convo, verdict, trace, record)
        if not fault:
            result.sections = list(evidence.sections)
            if evidence.handoff:
                trace["handoff_requested"] = evidence.handoff
        last = trace["rounds"][-1] if trace["rounds"] else {"provider": self.provider.name, "model": self.provider.model}
        trace.update({"provider": last["provider"] or self.provider.name, "model": last["model"] or self.provider.model,
                      "latency_ms": latency_ms,
                      **usage, "attempts": getattr(self.provider, "attempts", [])})
        result.trace = trace
        if rehearsal is not None:
            self._rehearse(rehearsal, question, result, list(evidence.texts))
        if not record:
            return result
        uncovered = result.status == "abstained"
        turn_id = conversations.record_turn(
            ctx, store, convo.id, question=question, status=result.status,
            answer=result.answer, citations=result.citations, evidence=list(evidence.texts), truncated=truncated,
            provider=str(trace["provider"]), model=str(trace["model"]), latency_ms=latency_ms,
            input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"], trace=trace, uncovered=uncovered,
        )
        current = conversations.require(ctx, store, convo.id)
        waiting = handoff.open_for(ctx, store, convo.id) is not None  # the team has it already: no second one
        if uncovered and hands_off(convo.channel, current.uncovered, waiting):
            result.handoff_id = self._hand_off(ctx, convo.id, "not_covered_twice", result.gap_id)
            result.status = "handoff"
            trace["handoff"] = {"id": result.handoff_id, "reason": "not_covered_twice"}
            result.answer = f"{result.answer} {prompts.message('handoff', language)}"
        elif evidence.handoff and not fault:
            if not waiting:
                result.handoff_id = self._hand_off(ctx, convo.id, evidence.handoff, result.gap_id)
            result.status = "handoff"
            trace["handoff"] = {"id": result.handoff_id, "reason": evidence.handoff}
        if result.status == "handoff":  # the turn was stored before the handoff (its transcript includes the turn)
            conversations.update_turn(ctx, store, turn_id, status="handoff", answer=result.answer, trace=trace)
        return result

    def _hand_off(self, ctx: TenantContext, conversation_id: str, reason: str, gap_id: int | None) -> int:
        """Queue the handoff (a ``not_covered*`` one linked to its gap) and notify the tenant's webhook."""
        handoff_id = handoff.create(ctx, self.rt.store, conversation_id, reason,
                                    gap_id if reason.startswith("not_covered") else None)
        self.rt.notifier.handoff_created(ctx, handoff_id)
        return handoff_id

    def _run_rounds(self, system: str, messages: list[Message], toolbox: Toolbox, usage: dict, trace: dict,
                    started: float, cancelled: Callable[[], bool], emit: Callable[[str, dict], None]) -> str:
        """Provider rounds until the model stops calling tools; returns its buffered final text."""
        for _ in range(MAX_ROUNDS):
            if cancelled():
                raise Cancelled()
            remaining = self.budget - (self.clock() - started)
            if remaining <= 0:
                raise TimeoutError()
            asked = time.perf_counter()
            def call(specs=toolbox.specs(), timeout=min(remaining, self.call_timeout)) -> Reply:
                return self.provider.complete(system, messages, specs, max_tokens=1024, timeout=timeout)

            reply = cancellable_call(call, cancelled, getattr(self.provider, "abort", lambda: None))
            usage["provider_ms"] += int((time.perf_counter() - asked) * 1000)
            if not trace["rounds"] or trace["rounds"][-1]["provider"] != reply.provider:  # first, and on failover
                emit("provider", {"name": reply.provider or self.provider.name, "model": reply.model or self.provider.model})
            usage["input_tokens"] += reply.usage.input_tokens
            usage["output_tokens"] += reply.usage.output_tokens
            trace["rounds"].append({"provider": reply.provider, "model": reply.model, "tool_calls": [
                {"name": c.name, "arguments": c.arguments} for c in reply.tool_calls], "stop": reply.stop_reason})
            if not reply.tool_calls:
                return reply.text
            messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            for call in reply.tool_calls:
                if cancelled():
                    raise Cancelled()
                messages.append(toolbox.run(call))
                done = toolbox.evidence.calls[-1]
                emit("tool", {"name": call.name, "status": done.get("status"), "found": done.get("status") == "found"})
            if toolbox.evidence.clarify is not None:
                return ""
        raise TimeoutError()

    @staticmethod
    def _rehearse(rehearsal: Rehearsal, question: str, result: TurnResult, evidence: list[str]) -> None:
        """Keep the turn in the rehearsal and apply the channel policy to it, as ``ask`` does to a stored one."""
        rehearsal.turns.append((question, result.answer))
        rehearsal.evidence = list(dict.fromkeys([*rehearsal.evidence, *evidence]))
        result.trace["rehearsal"] = True
        requested = result.trace.get("handoff_requested")
        if requested:
            rehearsal.handed_off = True
            result.status = "handoff"
            result.trace["handoff"] = {"reason": requested, "recorded": False}
            return
        if result.status != "abstained":
            return
        rehearsal.uncovered += 1
        if hands_off(rehearsal.channel, rehearsal.uncovered, rehearsal.handed_off):
            rehearsal.handed_off = True
            result.status = "handoff"
            result.answer = f"{result.answer} {prompts.message('handoff', result.language)}"
            result.trace["handoff"] = {"reason": "not_covered_twice", "recorded": False}

    def _abstain(self, ctx: TenantContext, result: TurnResult, question: str, convo, verdict, trace: dict,
                 record: bool) -> None:
        """Withhold everything; say clearly the material does not cover it; log the gap (A4, G1, G4)."""
        result.status, result.answer = "abstained", prompts.message("abstain", result.language)
        wrote_claims = verdict is not None and any(v.verdict not in ("exempt",) for v in verdict.claims)
        reason = "withheld_unsupported" if wrote_claims else "not_covered"
        trace["abstained"] = reason
        if record:
            result.gap_id = self.rt.backlog.record(ctx, question, result.language, convo.channel, convo.id, reason)
        if result.gap_id is None:  # not logged (a dry run, or masking failed): do not claim it was
            result.answer = result.answer.split(". ")[0] + "."

    def _citations(self, ctx: TenantContext, ids: list[str]) -> list[dict]:
        chunks = self.rt.index.chunks(ctx, ids)
        owners = sources_mod.get_by_ids(ctx, self.rt.store, sorted({c.source_id for c in chunks.values()}))
        out = []
        for cid in ids:
            chunk = chunks.get(cid)
            source = owners.get(chunk.source_id) if chunk else None
            out.append({"id": cid, "path": source.path if source else "", "title": source.title if source else "",
                        "url": source.url if source else "", "trained_at": chunk.trained_at if chunk else ""})
        return out
