"""Moving knowledge keeps what points at it: gaps closed with a moved article, QA cases that expect a
citation of it, and its answer and feedback counts follow the new path in the same transaction as the move."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.gaps import source_counts
from core.knowledge import sources as sources_mod
from core.knowledge.sources import Source
from core.qa import suites as qa
from core.tenancy.context import TenantContext

if TYPE_CHECKING:
    from core.runtime import Runtime


@dataclass(frozen=True)
class Moved:
    sources: list[Source]
    gaps: int
    qa_cases: int


def move(ctx: TenantContext, rt: Runtime, old: str, new: str) -> Moved:
    """Move a source or folder (see ``core.sources.move``) and repoint closed gaps and QA cases."""
    old_path, new_path = sources_mod.normalize_path(old), sources_mod.normalize_path(new)
    with rt.store.write():
        moved = sources_mod.move(ctx, rt.store, old_path, new_path)
        gaps = rt.backlog.repoint_articles(ctx, old_path, new_path)
        cases = qa.repoint_cites(ctx, rt.store, old_path, new_path)
        source_counts.repoint(ctx, rt.store, old_path, new_path)  # "cited by N answers" follows the source
    return Moved(moved, gaps, cases)
