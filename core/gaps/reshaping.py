"""Manual merge and split of gaps (G5): an editor's correction of the automatic merging.

A mixin of :class:`core.gaps.backlog.Backlog` (it uses the backlog's store, lock, history and version). This
module decides what moves where; the SQL on the gap tables stays in :mod:`core.gaps.backlog`, their owner.
"""
from __future__ import annotations

from core.gaps.labels import topic_label
from core.gaps.model import Gap, GapError, require_editor, stamp
from core.tenancy.context import TenantContext


class Reshaping:
    def merge(self, ctx: TenantContext, target_id: int, other_ids: list[int]) -> Gap:
        """Fold other gaps into ``target_id``: their variants, counts, languages and channels move over."""
        require_editor(ctx)
        target = self.require(ctx, target_id)
        others = [self.require(ctx, g) for g in dict.fromkeys(int(i) for i in other_ids) if int(g) != target.id]
        if not others:
            raise GapError("Name at least one other gap to merge into this one.")
        mixed = [o for o in others if o.kind != target.kind]
        if mixed:  # a refusal needs an article that answers, an unhelpful answer one that changes it: kept apart
            raise GapError(f"Gap {mixed[0].id} is “{mixed[0].kind_label}” and gap {target.id} is "
                           f"“{target.kind_label}”: gaps of different kinds are not merged (each is closed by its own "
                           "check).")
        with self._lock, self.store.write():
            for other in others:
                for follow in self.on_merge:  # what links to a gap follows it (handoffs: wired by the runtime)
                    follow(ctx, other.id, target.id)
                self._fold_rows(ctx, other.id, target.id)
                self._history(ctx, target.id, "merged", ctx.actor,
                              detail={"gap": other.id, "label": other.label, "count": other.count})
            self._recount(ctx, target.id, first=min([target.first_seen] + [o.first_seen for o in others]),
                          extra=sum(o.count for o in others), languages=[lang for o in others for lang in o.languages],
                          channels=[c for o in others for c in o.channels])
            self._bump(ctx)
        return self.require(ctx, target.id)

    def split(self, ctx: TenantContext, gap_id: int, variant_ids: list[int], label: str | None = None) -> Gap:
        """Move the chosen variants out into a new open gap (they were a different question)."""
        require_editor(ctx)
        gap = self.require(ctx, gap_id)
        chosen = {int(v) for v in variant_ids}
        rows = [r for r in self.samples(ctx, gap.id) if r["id"] in chosen]
        if not rows or len(rows) != len(chosen):
            raise GapError(f"Choose variants of gap {gap.id} to split off; ids shown by its samples list.")
        if len(rows) == len(self.samples(ctx, gap.id)):
            raise GapError("Leave at least one variant in the gap; splitting all of them would just rename it.")
        now = stamp(self.clock)
        first = min(r["at"] for r in rows)
        last = max(r["at"] for r in rows)
        name = label or next((topic_label(r["sample"], r["language"]) for r in rows if r["sample"]),
                             f"Split from gap {gap.id}")
        with self._lock, self.store.write():
            new_id = self._insert_gap(ctx, name, len(rows), first, last, sorted({r["language"] for r in rows}),
                                      sorted({r["channel"] for r in rows}), gap.kind)
            self._move_variants(ctx, [r["id"] for r in rows], new_id)
            left = self._variant_stamps(ctx, gap.id)
            self._set_counts(ctx, gap.id, max(gap.count - len(rows), len(left)), min(r["at"] for r in left),
                             max(r["at"] for r in left), sorted({r["language"] for r in left}),
                             sorted({r["channel"] for r in left}))
            self._history(ctx, gap.id, "split", ctx.actor, detail={"into": new_id, "variants": len(rows), "at": now})
            self._history(ctx, new_id, "opened", ctx.actor, detail={"split_from": gap.id})
            self._bump(ctx)
        return self.require(ctx, new_id)
