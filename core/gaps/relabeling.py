"""Labels stored before placeholders and their cue words were kept out of labels (#17: "email phone enterprise
support plan cost"): ``python -m core gaps relabel SLUG`` recomputes them.

A gap keeps the label it was opened with (the backlog never relabels on its own, so an editor's bookmarks and
CSV exports stay stable). This recomputes each label from the gap's oldest retained sample with
:func:`core.gaps.labels.topic_label`, and skips a gap an editor renamed (its history has a ``renamed`` event) or
whose samples retention has purged. Through :meth:`core.gaps.backlog.Backlog.rename`, so each change is in the
gap's history with the label it had.
"""
from __future__ import annotations

from core.gaps.labels import topic_label
from core.gaps.model import require_editor
from core.tenancy.context import TenantContext


def relabel(ctx: TenantContext, backlog, apply: bool = False) -> list[dict]:
    """``[{id, old, new}]`` for each gap whose recomputed label differs; renamed only when ``apply``."""
    require_editor(ctx)
    changes = []
    for gap in backlog.gaps(ctx):
        if any(event["event"] == "renamed" for event in backlog.history(ctx, gap.id)):
            continue  # an editor named it
        kept = [s for s in backlog.samples(ctx, gap.id) if s["sample"]]  # newest first
        if not kept:
            continue
        new = topic_label(kept[-1]["sample"], kept[-1]["language"])
        if new != gap.label:
            changes.append({"id": gap.id, "old": gap.label, "new": new})
    if apply:
        for change in changes:
            backlog.rename(ctx, change["id"], change["new"])
    return changes
