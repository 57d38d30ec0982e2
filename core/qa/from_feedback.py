"""An answer marked unhelpful becomes a QA case in one click (the Gap backlog's "Turn into QA case").

The case asks the gap's masked question (its newest retained sample with a 👎 behind it) on the channel it was
asked on, and expects an answer that does **not** say what the unhelpful one said (its ``forbidden`` text,
:mod:`core.qa.content`: the unhelpful answer without its framing line and citation marks, or its first sentence
when that is too long); when the gap is closed, an answer citing the article that closed it too. The note keeps
where it came from and the visitor's (masked) reason. Cases go to one suite,
``answer feedback`` unless another is named, created on first use. A second click on the same gap finds the
case already there and says so.
"""
from __future__ import annotations

import re

from core.base.store import Store
from core.gaps import feedback
from core.gaps.model import NOT_HELPFUL
from core.qa import suites
from core.qa.cases import MAX_NOTE_CHARS, Case, QaError, require_qa
from core.qa.content import MAX_TEXT_CHARS, normalize
from core.tenancy.context import CHANNELS, TenantContext

DEFAULT_SUITE = "answer feedback"
_MARKERS = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def unhelpful_text(answer: str) -> str:
    """What the next answer must not say again: the unhelpful answer's body (a first paragraph that only frames
    it, "Según nuestra documentación:", left out), without citation marks; its first sentence when the body is
    over the length of a forbidden text, cut at a word; '' when nothing is left."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", answer or "") if p.strip()]
    if len(paragraphs) > 1 and paragraphs[0].endswith(":"):
        paragraphs = paragraphs[1:]
    body = " ".join(_MARKERS.sub(" ", " ".join(paragraphs)).split())
    if len(body) > MAX_TEXT_CHARS:
        body = _SENTENCE_END.split(body)[0]
    if len(body) > MAX_TEXT_CHARS:
        body = body[:MAX_TEXT_CHARS].rsplit(" ", 1)[0]
    return body if normalize(body) else ""


def _source(ctx: TenantContext, store: Store, backlog, gap_id: int) -> tuple:
    """(gap, newest retained sample with its 👎 row) of a not-helpful gap, or a QaError saying why not."""
    gap = backlog.require(ctx, gap_id)
    if gap.kind != NOT_HELPFUL:
        raise QaError(f"Gap #{gap.id} is a question the agent did not answer, not an answer marked unhelpful: "
                      "write its case on the QA page (expect 'answered' once an article covers it).")
    samples = {s["id"]: s for s in backlog.samples(ctx, gap.id) if s["sample"]}
    rated = [r for r in feedback.for_variants(ctx, store, list(samples)) if r["variant_id"] in samples]
    if not rated:
        raise QaError(f"The questions of gap #{gap.id} were purged by retention: nothing is left to ask. Write the "
                      "case by hand on the QA page.")
    return gap, samples[rated[0]["variant_id"]], rated[0]


def case_from_gap(ctx: TenantContext, store: Store, backlog, gap_id: int, suite: str | int = DEFAULT_SUITE) -> Case:
    """Add the regression case of a not-helpful gap to ``suite`` (created when it does not exist)."""
    require_qa(ctx)
    gap, sample, rated = _source(ctx, store, backlog, gap_id)
    found = suites.get_suite(ctx, store, suite) or suites.create_suite(ctx, store, str(suite))
    channel = sample["channel"] if sample["channel"] in CHANNELS else "web"
    for case in suites.list_cases(ctx, store, found.id):
        if case.question == sample["sample"] and case.channel == channel:
            raise QaError(f"Suite '{found.name}' already has this question as case #{case.number}.")
    cite = (gap.article_path or "") if gap.status == "closed" else ""
    forbidden = unhelpful_text(rated["answer"] or "")
    note = f"From gap #{gap.id}: an answer marked unhelpful" + ("" if forbidden else " (its text was purged)")
    if rated["reason"]:
        note += f"; reason given: {rated['reason']}"
    return suites.add_case(ctx, store, found.id, sample["sample"], expect="answered", channel=channel, cite=cite,
                           note=note[:MAX_NOTE_CHARS], forbidden=[forbidden] if forbidden else [])
