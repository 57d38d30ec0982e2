"""Self-verifying closure (G3): before a gap is closed, replay its stored samples against the trained KB.

Each masked sample is asked again through the offline responder and the citation gate, as a dry run
(nothing is recorded: no conversation, no gap, no handoff). The editor sees which samples the knowledge
now answers, and whether the answer cites the article they are closing the gap with, before confirming.

A gap of kind ``not_helpful`` (an answer a visitor marked unhelpful, :mod:`core.gaps.feedback`) was answered
already: "answered" proves nothing there. Each of its rows also says whether the answer **changed**: answered,
and worded differently from the unhelpful one when both come from the same responder, or built on other
evidence (other chunks cited: an edited article has new chunk ids) when a model gave the unhelpful answer and
the replay is offline (see :func:`changed`). The backlog refuses to close such a gap when no stored question gets
a changed answer.
"""
from __future__ import annotations

import re

from core.agent.loop import Agent
from core.agent.protocol import Dialogue, Provider
from core.agent.providers.offline import OfflineResponder
from core.gaps import feedback
from core.gaps.model import NOT_HELPFUL
from core.tenancy.context import TenantContext

_MARKER = re.compile(r"\[\d+\]")


def same_text(a: str, b: str) -> bool:
    """The same answer, whatever its citation markers, case and spacing."""
    def norm(text: str) -> str:
        return " ".join(_MARKER.sub(" ", text or "").casefold().split())
    return norm(a) == norm(b)


def changed(before: dict, answered: bool, answer: str, chunk_ids: list[str], provider: str) -> bool:
    """Did the replay give another answer than the one marked unhelpful (``before``: its feedback row)?

    From the same responder the words decide (an edited article that yields the same sentence changed nothing the
    visitor reads). From another one (a model answered, the replay is offline) words always differ, so only the
    evidence can tell: other chunks cited. So too once retention purged the unhelpful answer's text."""
    if not answered:
        return False
    if before.get("provider") == provider and before.get("answer"):
        return not same_text(before["answer"], answer)
    return {c["id"] for c in before["citations"] if c.get("id")} != set(chunk_ids)


def replay_gap(ctx: TenantContext, rt, gap_id: int, article_path: str | None = None,
               provider: Provider | None = None) -> list[dict]:
    """One row per retained sample: answered or not, the released answer, its citations; for a not-helpful
    gap also the answer marked unhelpful (``previous_answer``) and whether the new one ``changed``."""
    provider = provider or OfflineResponder()
    agent = Agent(rt, provider)
    gap = rt.backlog.require(ctx, gap_id)
    samples = rt.backlog.samples(ctx, gap.id)
    rated = {}
    if gap.kind == NOT_HELPFUL:
        rated = {r["variant_id"]: r for r in feedback.for_variants(ctx, rt.store, [s["id"] for s in samples])}
    rows, seen = [], set()
    for sample in samples:
        if not sample["sample"] or sample["sample"] in seen:
            continue  # purged by retention (nothing left to replay), or a repeat of one already replayed
        seen.add(sample["sample"])
        result = agent.answer(ctx, Dialogue("sandbox"), sample["sample"])
        paths = [c["path"] for c in result.citations]
        answered = result.status == "answered"
        row = {
            "variant_id": sample["id"], "sample": sample["sample"], "language": sample["language"],
            "answered": answered, "answer": result.answer if answered else "",
            "citations": paths, "cites_article": bool(article_path) and article_path in paths,
        }
        before = rated.get(sample["id"])
        if gap.kind == NOT_HELPFUL and before is not None:
            row["previous_answer"] = before["answer"] or ""
            row["changed"] = changed(before, answered, result.answer, [c["id"] for c in result.citations],
                                     getattr(provider, "name", ""))
        rows.append(row)
    return rows
