"""The tool loop (A1-A3, A8): provider <-> tools, the whole answer buffered, the gate, one revision round.

``Agent.answer`` writes nothing: it returns an :class:`~core.agent.outcome.Outcome` for the turn pipeline
(``core.channels.turn``) to record. Nothing reaches the customer before the gate has judged the whole
answer; an answer that still has an unsupported claim after the revision round is withheld whole.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from core.agent import partial, prompts
from core.agent.builtin_tools import builtin_tools
from core.agent.cancel import Cancelled, cancellable_call, never
from core.agent.followups import followups
from core.agent.injection import defuse
from core.agent.outcome import Abstention, Fault, Outcome, Status, TurnTrace
from core.agent.protocol import Dialogue, Message, Provider, Reply, TransportError
from core.agent.registry import Tool, ToolEnv, ToolRegistry, TurnEvidence
from core.base.language import detect
from core.grounding.gate import Evidence, check, release
from core.knowledge import sources as sources_mod
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext

MAX_ROUNDS = 6
DEFAULT_BUDGET_SECONDS = 60.0


class Agent:
    """Answers one question of a conversation with a provider, the registered tools and the gate.

    ``services`` is what the tools and citations read: ``retriever``, ``knowledge``, ``index`` and ``store``
    (the runtime has them all); the agent never builds them."""

    def __init__(self, services: Any, provider: Provider, *, budget_seconds: float = DEFAULT_BUDGET_SECONDS,
                 clock: Callable[[], float] = time.monotonic, extra_tools: Sequence[Tool] = (), tenant_name: str = "",
                 call_timeout: float = 60.0):
        self.services, self.provider, self.budget, self.clock = services, provider, budget_seconds, clock
        self.call_timeout = call_timeout
        self.tools = ToolRegistry([*builtin_tools(), *extra_tools])
        self.tenant_name = tenant_name

    def answer(self, ctx: TenantContext, dialogue: Dialogue, question: str, *,
               settings: tenant_settings.TenantSettings | None = None, cancelled: Callable[[], bool] = never,
               on_event: Callable[[str, dict], None] | None = None) -> Outcome:
        """Answer ``question`` in ``dialogue``; records nothing. ``settings`` are the tenant's (read when not
        given). ``on_event(name, data)`` hears the turn's progress as it happens (``provider`` when a provider
        answers a round, ``tool`` after each call); nothing of the answer goes through it. ``cancelled`` is
        polled before every provider round and tool call; when it turns true the turn raises :class:`Cancelled`."""
        settings = settings or tenant_settings.get(ctx, self.services.store)
        started = self.clock()
        language = detect(question)
        evidence = TurnEvidence()
        # what earlier turns cited supports this one too, through the same guard as a fresh search result
        evidence.texts.update({cid: defuse(c.text)[0]
                               for cid, c in self.services.index.chunks(ctx, list(dialogue.evidence_ids)).items()})
        env = ToolEnv(ctx, self.services, list(dialogue.history), evidence, reasons=dict(settings.handoff_reasons),
                      sections=dict(settings.sections), conversation_id=dialogue.conversation_id, language=language)
        trace = TurnTrace(dialogue.channel, language, tools=evidence.calls, hits=evidence.hits)
        messages = [Message(role, text) for role, text in dialogue.history] + [Message("user", question)]
        status, text, truncated, fault, verdict = self._converse(env, messages, trace, started, cancelled,
                                                                 on_event or (lambda name, data: None))
        outcome = Outcome(Status(status or Status.ABSTAINED), "", language, trace, truncated=truncated,
                          evidence_ids=[i for i in evidence.texts if i not in evidence.live_ids])  # live: this turn
        settled = (Status.ANSWERED, Status.CLARIFY, Status.CARD)
        if not fault and status not in settled and evidence.faults and not evidence.texts:
            fault = (Fault.TOOLS_FAILED, "every tool call failed")  # nothing was looked up: a fault, never a gap (G4)
        trace.latency_ms = int((self.clock() - started) * 1000)
        self._settle(ctx, outcome, question, evidence, verdict, text, fault)
        last = trace.rounds[-1] if trace.rounds else {"provider": self.provider.name, "model": self.provider.model}
        trace.provider = last["provider"] or self.provider.name
        trace.model = last["model"] or self.provider.model
        trace.attempts = getattr(self.provider, "attempts", [])
        return outcome

    def _converse(self, env: ToolEnv, messages: list[Message], trace: TurnTrace, started: float,
                  cancelled: Callable[[], bool], emit: Callable[[str, dict], None]):
        """The answer, then at most one revision; returns (status, text, truncated, fault, last verdict)."""
        evidence, status, text, verdict = env.evidence, "", "", None
        system = prompts.system_prompt(self.tenant_name or env.ctx.tenant_slug, trace.language)
        asked = len(messages) - 1  # the customer's question; a revision request comes after it
        try:
            for attempt in range(2):
                text = self._run_rounds(system, messages, env, trace, started, cancelled, emit)
                if evidence.clarify is not None:
                    return Status.CLARIFY, text, False, None, verdict
                if evidence.cards:  # a write tool proposed a card: the customer decides; nothing else to say
                    return Status.CARD, text, False, None, verdict
                if evidence.notice and evidence.notice["fault"]:  # an action failed or is off: a fault, never a gap
                    return status, text, False, (Fault.TOOLS_FAILED, "an action could not run"), verdict
                if evidence.notice:  # a refusal built from the live state: judged by the gate like any answer
                    text = evidence.notice["text"]
                missing, rest = partial.split(text)
                # relevance is judged for a model's answer; a partial one gives the closest fact by design, and the
                # offline responder released only what its own answerability checks (with coverage) let through
                judged = not missing and not evidence.notice and (
                    trace.rounds[-1]["provider"] if trace.rounds else "") != "offline"
                verdict = check(rest,
                                Evidence(dict(evidence.texts), frozenset(evidence.other_ids), tuple(evidence.live),
                                         {h["id"]: f'{h["title"]} {h["path"]}' for h in evidence.hits},
                                         evidence.live_texts(), evidence.live_empty()),
                                prompts.exempt_sentences(), question=messages[asked].content if judged else None)
                trace.gate.append({"round": attempt, "ok": verdict.ok, "claims": [
                    {"claim": v.claim.text, "citations": list(v.claim.citations), "verdict": v.verdict,
                     "detail": v.detail, "support": round(v.support, 3)} for v in verdict.claims]})
                if verdict.ok:
                    return Status.ANSWERED, text, False, None, verdict
                if evidence.handoff or evidence.notice:  # a fixed message replaces it: no revision round
                    break
                if attempt == 0:
                    messages += [Message("assistant", text),
                                 Message("user", prompts.revision_request(verdict.feedback()))]
        except TransportError as exc:
            return status, text, False, (Fault.PROVIDER_UNAVAILABLE, f"provider unavailable: {exc}"), verdict
        except TimeoutError:
            return status, text, True, (Fault.TRUNCATED, "wall-clock budget exhausted"), verdict
        return status, text, False, None, verdict

    def _settle(self, ctx: TenantContext, outcome: Outcome, question: str, evidence: TurnEvidence, verdict,
                text: str, fault: tuple[Fault, str] | None) -> None:
        """Turn the conversation's result into what may be released (or the fault, or the abstention)."""
        language, trace = outcome.language, outcome.trace
        if fault:
            outcome.status, outcome.fault = Status.ERROR, fault[0]
            outcome.answer = prompts.message("truncated" if outcome.truncated else "fault", language)
            if evidence.notice and evidence.notice["fault"]:  # what the action's tool said, in the customer's words
                outcome.answer = evidence.notice["text"]
            trace.fault = fault[1]
            return
        if outcome.status == Status.CLARIFY:
            outcome.answer, outcome.clarify = "\n".join(q["question"] for q in evidence.clarify or []), evidence.clarify
        elif outcome.status == Status.CARD:
            outcome.answer, outcome.cards = prompts.message("card", language), list(evidence.cards)
        elif outcome.status == Status.ANSWERED:
            missing, text = partial.split(text)
            outcome.answer, ids = release(text)
            outcome.citations = self._citations(ctx, ids, evidence)
            if missing:  # the topic is covered, the point asked is not: said first; still a gap (G1)
                outcome.status, outcome.abstention = Status.PARTIAL, Abstention.PARTIAL
                outcome.answer = partial.render(missing, outcome.answer, language)
                trace.abstained, trace.missing = Abstention.PARTIAL.value, missing
            else:
                outcome.followups = followups(evidence.hits, ids, question, language)
        elif evidence.handoff:  # the model handed over: a person takes it, whatever it wrote; no gap
            outcome.status, outcome.answer = Status.HANDOFF, prompts.message("handoff", language)
        else:  # withhold everything; say clearly the material does not cover it (A4, G1, G4)
            outcome.answer = prompts.message("abstain", language)
            wrote_claims = verdict is not None and any(v.verdict not in ("exempt",) for v in verdict.claims)
            outcome.abstention = Abstention.WITHHELD_UNSUPPORTED if wrote_claims else Abstention.NOT_COVERED
            trace.abstained = outcome.abstention.value
        outcome.sections = list(evidence.sections)
        if outcome.status in (Status.ANSWERED, Status.PARTIAL):  # the window goes with the answer that offers it
            outcome.booking_window = evidence.booking_window
        if evidence.handoff:
            outcome.handoff_requested = trace.handoff_requested = evidence.handoff

    def _run_rounds(self, system: str, messages: list[Message], env: ToolEnv, trace: TurnTrace,
                    started: float, cancelled: Callable[[], bool], emit: Callable[[str, dict], None]) -> str:
        """Provider rounds until the model stops calling tools; returns its buffered final text."""
        for _ in range(MAX_ROUNDS):
            if cancelled():
                raise Cancelled()
            remaining = self.budget - (self.clock() - started)
            if remaining <= 0:
                raise TimeoutError()
            reply = self._ask_provider(system, messages, env, trace, min(remaining, self.call_timeout), cancelled, emit)
            if not reply.tool_calls:
                return reply.text
            messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            for call in reply.tool_calls:
                if cancelled():
                    raise Cancelled()
                messages.append(self.tools.run(env, call))
                done = env.evidence.calls[-1]
                emit("tool", {"name": call.name, "status": done.get("status"), "found": done.get("status") == "found"})
            if env.evidence.clarify is not None or env.evidence.cards or env.evidence.notice:
                return ""
        raise TimeoutError()

    def _ask_provider(self, system: str, messages: list[Message], env: ToolEnv, trace: TurnTrace, timeout: float,
                      cancelled: Callable[[], bool], emit: Callable[[str, dict], None]) -> Reply:
        asked = time.perf_counter()

        def call(specs=self.tools.specs(env)) -> Reply:  # noqa: B008 - specs built now, in the turn's thread
            return self.provider.complete(system, messages, specs, max_tokens=1024, timeout=timeout)

        reply = cancellable_call(call, cancelled, getattr(self.provider, "abort", lambda: None))
        trace.provider_ms += int((time.perf_counter() - asked) * 1000)
        if not trace.rounds or trace.rounds[-1]["provider"] != reply.provider:  # first, and on failover
            emit("provider", {"name": reply.provider or self.provider.name,
                              "model": reply.model or self.provider.model})
        trace.input_tokens += reply.usage.input_tokens
        trace.output_tokens += reply.usage.output_tokens
        trace.rounds.append({"provider": reply.provider, "model": reply.model, "tool_calls": [
            {"name": c.name, "arguments": c.arguments} for c in reply.tool_calls], "stop": reply.stop_reason})
        return reply

    def _citations(self, ctx: TenantContext, ids: list[str], evidence: TurnEvidence) -> list[dict]:
        """The released answer's sources, in citation order: knowledge chunks, and live results of this turn."""
        chunks = self.services.index.chunks(ctx, [cid for cid in ids if cid not in evidence.live_ids])
        owners = sources_mod.get_by_ids(ctx, self.services.store, sorted({c.source_id for c in chunks.values()}))
        out = []
        for cid in ids:
            live = evidence.live_ids.get(cid)
            if live:
                out.append({"id": cid, "title": live["title"], "path": f'live/{live["operation"]}', "url": "",
                            "trained_at": "", "live": True, "fetched_at": live["fetched_at"]})
                continue
            chunk = chunks.get(cid)
            source = owners.get(chunk.source_id) if chunk else None
            out.append({"id": cid, "path": source.path if source else "", "title": source.title if source else "",
                        "url": source.url if source else "", "trained_at": chunk.trained_at if chunk else ""})
        return out
