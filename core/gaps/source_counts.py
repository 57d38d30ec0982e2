"""How each source fares in answers: "cited by 12 answers, 3 marked unhelpful" (the Sources tree).

The answers are counted as each turn is recorded (``source_answers``, this module's table; the turn log calls
:func:`count_answer` inside its own write), the ratings are read from :mod:`core.gaps.feedback`. Neither
reads the turns, so the purge of the private logs after their retention changes no count. Only answers to
visitors count: a Sandbox turn (channel ``sandbox``) is an editor's rehearsal. A source that moves keeps its
counts (:func:`repoint`, called by :mod:`core.curation.relocation`); a folder sums the sources below it.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.base.store import Store
from core.gaps import feedback
from core.tenancy.context import TenantContext

NOT_COUNTED_CHANNELS = ("sandbox",)


@dataclass(frozen=True)
class SourceCounts:
    answers: int = 0  # answers that cited the source (once per answer, however many of its chunks)
    helpful: int = 0  # of the rated ones: 👍
    unhelpful: int = 0  # 👎

    def describe(self) -> str:
        """'cited by 12 answers, 3 marked unhelpful' (the parts that are not zero; '' when all are)."""
        parts = []
        if self.answers:
            parts.append(f"cited by {self.answers} answer{'s' if self.answers != 1 else ''}")
        if self.unhelpful:
            parts.append(f"{self.unhelpful} marked unhelpful")
        if self.helpful:
            parts.append(f"{self.helpful} marked helpful")
        return ", ".join(parts)

    def __add__(self, other: SourceCounts) -> SourceCounts:
        return SourceCounts(self.answers + other.answers, self.helpful + other.helpful,
                            self.unhelpful + other.unhelpful)


def cited_paths(citations: list[dict]) -> list[str]:
    return sorted({str(c.get("path") or "") for c in citations} - {""})


def count_answer(ctx: TenantContext, store: Store, channel: str, citations: list[dict]) -> None:
    """One more answer citing each of these sources (a visitor's: Sandbox turns are not counted)."""
    if channel in NOT_COUNTED_CHANNELS:
        return
    with store.write() as db:
        for path in cited_paths(citations):
            db.execute("INSERT INTO source_answers (tenant_id, path, answers) VALUES (?, ?, 1) "
                       "ON CONFLICT (tenant_id, path) DO UPDATE SET answers = answers + 1", [ctx.tenant_id, path])


def counts(ctx: TenantContext, store: Store) -> dict[str, SourceCounts]:
    """{source path: its counts} for every path an answer cited or a rating named."""
    answers = {r["path"]: r["answers"] for r in store.query(
        "SELECT path, answers FROM source_answers WHERE tenant_id = ?", [ctx.tenant_id])}
    rated = feedback.ratings_by_path(ctx, store)
    return {path: SourceCounts(answers.get(path, 0), rated.get(path, {}).get("helpful", 0),
                               rated.get(path, {}).get("unhelpful", 0))
            for path in sorted(set(answers) | set(rated))}


def below(all_counts: dict[str, SourceCounts], path: str) -> SourceCounts:
    """The counts of ``path`` and of every source below it (a folder)."""
    total = SourceCounts()
    for cited, found in all_counts.items():
        if cited == path or cited.startswith(path.rstrip("/") + "/"):
            total = total + found
    return total


def repoint(ctx: TenantContext, store: Store, old: str, new: str) -> None:
    """Sources under ``old`` moved to ``new``: their counts follow (added to any already kept at the new path)."""
    with store.write() as db:
        for row in store.query("SELECT path, answers FROM source_answers WHERE tenant_id = ? AND "
                               "(path = ? OR (path >= ? AND path < ?))", [ctx.tenant_id, old, old + "/", old + "0"]):
            db.execute("DELETE FROM source_answers WHERE tenant_id = ? AND path = ?", [ctx.tenant_id, row["path"]])
            db.execute("INSERT INTO source_answers (tenant_id, path, answers) VALUES (?, ?, ?) ON CONFLICT "
                       "(tenant_id, path) DO UPDATE SET answers = answers + excluded.answers",
                       [ctx.tenant_id, new + row["path"][len(old):], row["answers"]])
        feedback.repoint_paths(ctx, store, old, new)
