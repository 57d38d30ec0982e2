"""The event catalog of ``POST /v1/chat`` (P2), built from a finished turn.

Only this module names events, and every payload is JSON made here: model text travels inside a JSON string
(``text.d``), so it can never start an event of its own. The answer's text exists only after the gate
passed it (the turn pipeline returns it released), and a withheld answer contributes no text at all: the
``verify`` summary carries counts and verdict labels, never the claims.
"""
from __future__ import annotations

import re

from api.render import render_answer
from core.agent import prompts
from core.agent.outcome import Fault, Status, TurnTrace
from core.channels.turn import TurnResult

EVENTS = ("provider", "tool", "verify", "citations", "text", "rendered", "section", "card", "booking_window",
          "handoff", "followups", "error", "done")
TEXT_CHUNK = 200  # characters per text event, cut at a space

#: What went wrong, for the client: (code, retryable) by the turn's fault.
_FAULTS = {Fault.KILL_SWITCH: ("switched_off", False), Fault.PROVIDER_UNAVAILABLE: ("provider_unavailable", True),
           Fault.TRUNCATED: ("truncated", True), Fault.TOOLS_FAILED: ("tools_failed", True)}


def chunks(text: str, size: int = TEXT_CHUNK) -> list[str]:
    """``text`` in pieces of about ``size`` characters, cut after a space; joined they give ``text`` back."""
    out, rest = [], text
    while len(rest) > size:
        cut = rest.rfind(" ", 0, size) + 1 or size
        out.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        out.append(rest)
    return out


def verify_summary(trace: TurnTrace | None) -> dict | None:
    """The gate's verdict on the last round, as counts and labels (no claim text)."""
    rounds = trace.gate if trace else []
    if not rounds:
        return None
    last = rounds[-1]
    labels = [c["verdict"] for c in last["claims"]]
    return {"ok": last["ok"], "claims": len(labels), "supported": labels.count("supported") + labels.count("live_data"),
            "exempt": labels.count("exempt"),
            "unsupported": sum(v not in ("supported", "live_data", "exempt") for v in labels),
            "revised": len(rounds) > 1, "verdicts": labels}


def fault_code(fault: Fault | None) -> tuple[str, bool]:
    return _FAULTS.get(fault, ("fault", True)) if fault else ("fault", True)


def turn_events(result: TurnResult) -> list[tuple[str, dict]]:
    """Every event after the progress ones, ending with the one terminal ``done``."""
    events: list[tuple[str, dict]] = []
    summary = verify_summary(result.trace)
    if summary:
        events.append(("verify", summary))
    if result.status == Status.ERROR:
        code, retryable = fault_code(result.fault)
        events.append(("error", {"code": code, "message": result.answer, "retryable": retryable}))
    else:
        if result.citations:
            events.append(("citations", {"items": [
                {"n": n, "id": c["id"], "title": c["title"], "path": c["path"], "url": c.get("url") or ""}
                for n, c in enumerate(result.citations, start=1)]}))
        visible = _visible_text(result)
        events += [("text", {"d": piece}) for piece in chunks(visible)]
        if visible:  # the same text as safe HTML (api/render.py): the widget shows it in place of the plain text
            events.append(("rendered", {"html": render_answer(visible)}))
    events += [("section", {"id": s["id"], "description": s["description"]}) for s in result.sections]
    # the turn's recorded cards (Card.event(): id, operation, title, preview, params, expires_at, status): the
    # widget renders each with Approve / Reject, which POST /v1/cards/{id}/approve|reject (api/cards.py)
    events += [("card", dict(card)) for card in result.cards]
    if result.booking_window:  # the free times to pick from (the widget holds the one picked: api/booking.py)
        events.append(("booking_window", dict(result.booking_window)))
    if result.status == Status.HANDOFF:
        handoff = (result.trace.handoff if result.trace else None) or {}
        events.append(("handoff", {"id": result.handoff_id, "reason": handoff.get("reason", ""),
                                   "message": prompts.message("handoff", result.language)}))
    followups = result.followups or _clarify_options(result)
    if followups:
        events.append(("followups", {"items": followups}))
    events.append(("done", done_payload(result)))
    return events


def done_payload(result: TurnResult | None, conversation_id: str = "", truncated: bool = False) -> dict:
    """The terminal event. A partial answer (status ``partial``, or a ``handoff`` that followed one) also names
    what the material does not mention, ``missing``: its text's first paragraph says so, the rest is cited."""
    if result is None:
        return {"truncated": truncated, "status": "error", "conversation_id": conversation_id}
    trace = result.trace or TurnTrace("", "")
    done = {"truncated": bool(result.truncated or truncated), "status": str(result.status),
            "conversation_id": result.conversation_id or conversation_id, "language": result.language,
            "usage": {"input_tokens": trace.input_tokens, "output_tokens": trace.output_tokens,
                      "provider_ms": trace.provider_ms, "latency_ms": trace.latency_ms}}
    if result.turn_id is not None:  # the recorded turn: what the widget's 👍/👎 rate (POST .../turns/{id}/feedback)
        done["turn_id"] = int(result.turn_id)
    if trace.missing and result.status in (Status.PARTIAL, Status.HANDOFF):
        done["missing"] = [str(word) for word in trace.missing]
    return done


def _visible_text(result: TurnResult) -> str:
    if result.status == Status.CLARIFY and result.clarify:
        return "\n".join(q["question"] for q in result.clarify)
    return result.answer


def _clarify_options(result: TurnResult) -> list[str]:
    """A clarifying question's options become clickable follow-ups (the first question's)."""
    if result.status != Status.CLARIFY or not result.clarify:
        return []
    return [re.sub(r"\s+", " ", str(o)).strip() for o in result.clarify[0]["options"]][:4]
