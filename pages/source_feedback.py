"""How each source fares in answers, on the Sources page: the tree's "Answers" column ("12 · 3 unhelpful") and the
chosen source's or folder's sentence ("cited by 12 answers, 3 marked unhelpful").

The counts come from :mod:`core.gaps.source_counts`: answers to visitors that cited the source (Sandbox rehearsals
aside), and their 👍/👎. They are kept apart from the turn log, so its purge after the log retention leaves them
as they were; a folder sums the sources below it.
"""
from __future__ import annotations

from core.gaps import source_counts
from core.gaps.source_counts import SourceCounts
from core.runtime import Runtime
from core.tenancy.context import TenantContext

HELP = ("Answers to visitors that cited it (each answer once; Sandbox rehearsals not counted), and how many of "
        "them a visitor marked unhelpful (thumbs down). Kept when the private logs are purged.")


def short(found: SourceCounts) -> str:
    """'12 · 3 unhelpful' for the tree ('' when nothing cited or rated it)."""
    if not (found.answers or found.unhelpful):
        return ""
    return f"{found.answers}" + (f" · {found.unhelpful} unhelpful" if found.unhelpful else "")


def annotate(rt: Runtime, ctx: TenantContext, rows: list[dict]) -> None:
    """Add each tree row's ``answers`` label (a folder's sums what is below it)."""
    counts = source_counts.counts(ctx, rt.store)
    for row in rows:
        found = counts.get(row["path"], SourceCounts()) if row["kind"] == "source" else source_counts.below(
            counts, row["path"])
        row["answers"] = short(found)


def sentence(rt: Runtime, ctx: TenantContext, path: str, folder: bool = False) -> str:
    """'cited by 12 answers, 3 marked unhelpful' ('not cited by any answer yet' when nothing is counted)."""
    counts = source_counts.counts(ctx, rt.store)
    found = source_counts.below(counts, path) if folder else counts.get(path, SourceCounts())
    return found.describe() or "not cited by any answer yet"
