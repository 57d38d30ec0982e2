"""How the admin pages name a turn (the Sandbox, the Inbox): its status badge, what an abstention's reason means,
and what a partial answer left out. One table, so a status added to the agent is labelled once."""
from __future__ import annotations

from pages.display import md

STATUS = {  # status -> (badge label, colour)
    "answered": ("Answered", "green"),
    "partial": ("Partial: point not covered", "yellow"),
    "abstained": ("Refused: not covered", "orange"),
    "handoff": ("Handed off to a person", "violet"),
    "clarify": ("Asks to clarify", "blue"),
    "card": ("Proposed a confirmation card", "violet"),
    "error": ("Error", "red"),
}
#: ``trace.abstained`` -> what it means (the reason a question went on the gap backlog)
REASONS = {
    "not_covered": "nothing in the knowledge covered the question",
    "withheld_unsupported": "the answer was withheld: a claim still failed the gate after the revision round",
    "partial": "the material covers the topic but not the point asked: the answer says what it does not mention, "
               "then gives the closest cited facts",
}
#: ``trace.abstained`` -> its short name (the gap backlog's samples table)
REASON_LABELS = {"not_covered": "not covered", "withheld_unsupported": "withheld unsupported",
                 "partial": "partial: point not covered"}


def badge(status: str, trace: dict | None) -> tuple[str, str]:
    """The badge (label, colour) of a turn: a withheld answer and a partial one that was handed off say so."""
    trace = trace or {}
    label, colour = STATUS.get(status, (str(status), "gray"))
    if status == "abstained" and trace.get("abstained") == "withheld_unsupported":
        label = "Refused: answer withheld"
    elif status == "handoff" and trace.get("abstained") == "partial":
        label = "Partial, then handed off to a person"
    return label, colour


def missing(trace: dict | None) -> str:
    """What a partial answer says the material does not mention, as markdown ("" for any other turn)."""
    words = [str(w) for w in (trace or {}).get("missing") or [] if str(w).strip()]
    return ", ".join(f"“{md(w)}”" for w in words)


def uncovered(trace: dict | None) -> bool:
    """The question is a gap: refused (not covered, or withheld) or answered only in part."""
    return bool((trace or {}).get("abstained"))


def trace_title(trace: dict | None) -> str:
    """The title of a turn's trace: a gap's trace says which kind of gap it is."""
    reason = (trace or {}).get("abstained")
    return "Partial answer trace" if reason == "partial" else "Refusal trace" if reason else "Trace"
