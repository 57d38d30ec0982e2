"""Self-verifying closure (G3): before a gap is closed, replay its stored samples against the trained KB.

Each masked sample is asked again through the offline responder and the citation gate, as a dry run
(nothing is recorded: no conversation, no gap, no handoff). The editor sees which samples the knowledge
now answers, and whether the answer cites the article they are closing the gap with, before confirming.
"""
from __future__ import annotations

from core.agent.loop import Agent
from core.agent.protocol import Dialogue, Provider
from core.agent.providers.offline import OfflineResponder
from core.tenancy.context import TenantContext


def replay_gap(ctx: TenantContext, rt, gap_id: int, article_path: str | None = None,
               provider: Provider | None = None) -> list[dict]:
    """One row per retained sample: answered or not, the released answer, its citations."""
    agent = Agent(rt, provider or OfflineResponder())
    rows, seen = [], set()
    for sample in rt.backlog.samples(ctx, rt.backlog.require(ctx, gap_id).id):
        if not sample["sample"] or sample["sample"] in seen:
            continue  # purged by retention (nothing left to replay), or a repeat of one already replayed
        seen.add(sample["sample"])
        result = agent.answer(ctx, Dialogue("sandbox"), sample["sample"])
        paths = [c["path"] for c in result.citations]
        rows.append({
            "variant_id": sample["id"], "sample": sample["sample"], "language": sample["language"],
            "answered": result.status == "answered", "answer": result.answer if result.status == "answered" else "",
            "citations": paths, "cites_article": bool(article_path) and article_path in paths,
        })
    return rows
