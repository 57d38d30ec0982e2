"""Manual merge and split of gaps (G5): an editor's correction of the automatic merging.

A mixin of :class:`core.gaps.Backlog` (it uses the backlog's store, lock, history and version).
"""
from __future__ import annotations

import json

from core.gaps.model import Gap, GapError, require_editor, stamp, topic_label
from core.tenancy.context import TenantContext


class Reshaping:
    def merge(self, ctx: TenantContext, target_id: int, other_ids: list[int]) -> Gap:
        """Fold other gaps into ``target_id``: their variants, counts, languages and channels move over."""
        require_editor(ctx)
        target = self.require(ctx, target_id)
        others = [self.require(ctx, g) for g in dict.fromkeys(int(i) for i in other_ids) if int(g) != target.id]
        if not others:
            raise GapError("Name at least one other gap to merge into this one.")
        with self._lock, self.store.write() as db:
            for other in others:
                db.execute("UPDATE gap_variants SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",
                           [target.id, ctx.tenant_id, other.id])
                db.execute("UPDATE gap_history SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",
                           [target.id, ctx.tenant_id, other.id])
                db.execute("UPDATE handoffs SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",  # their handoffs follow
                           [target.id, ctx.tenant_id, other.id])
                db.execute("DELETE FROM gaps WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, other.id])
                self._history(ctx, target.id, "merged", ctx.actor,
                              detail={"gap": other.id, "label": other.label, "count": other.count})
            self._recount(ctx, target.id, first=min([target.first_seen] + [o.first_seen for o in others]),
                          extra=sum(o.count for o in others), languages=[l for o in others for l in o.languages],
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
        name = label or next((topic_label(r["sample"], r["language"]) for r in rows if r["sample"]), f"Split from gap {gap.id}")
        with self._lock, self.store.write() as db:
            new_id = db.execute(
                "INSERT INTO gaps (tenant_id, label, status, count, first_seen, last_seen, languages, channels) "
                "VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
                [ctx.tenant_id, name, len(rows), first, last, json.dumps(sorted({r["language"] for r in rows})),
                 json.dumps(sorted({r["channel"] for r in rows}))]).lastrowid
            db.execute(f"UPDATE gap_variants SET gap_id = ? WHERE tenant_id = ? AND id IN ({','.join('?' * len(rows))})",
                       [new_id, ctx.tenant_id, *[r["id"] for r in rows]])
            left = self.store.query("SELECT at, language, channel FROM gap_variants WHERE tenant_id = ? AND gap_id = ?",
                                    [ctx.tenant_id, gap.id])
            db.execute("UPDATE gaps SET count = ?, first_seen = ?, last_seen = ?, languages = ?, channels = ? "
                       "WHERE tenant_id = ? AND id = ?",
                       [max(gap.count - len(rows), len(left)), min(r["at"] for r in left), max(r["at"] for r in left),
                        json.dumps(sorted({r["language"] for r in left})), json.dumps(sorted({r["channel"] for r in left})),
                        ctx.tenant_id, gap.id])
            self._history(ctx, gap.id, "split", ctx.actor, detail={"into": new_id, "variants": len(rows), "at": now})
            self._history(ctx, new_id, "opened", ctx.actor, detail={"split_from": gap.id})
            self._bump(ctx)
        return self.require(ctx, new_id)

    def _recount(self, ctx: TenantContext, gap_id: int, first: str, extra: int, languages: list[str],
                 channels: list[str]) -> None:
        row = self.store.query("SELECT languages, channels, last_seen FROM gaps WHERE tenant_id = ? AND id = ?",
                               [ctx.tenant_id, gap_id])[0]
        last = max([row["last_seen"]] + [r["at"] for r in self.samples(ctx, gap_id)])
        self.store.db.execute(
            "UPDATE gaps SET count = count + ?, first_seen = ?, last_seen = ?, languages = ?, channels = ? "
            "WHERE tenant_id = ? AND id = ?",
            [extra, first, last, json.dumps(sorted(set(json.loads(row["languages"])) | set(languages))),
             json.dumps(sorted(set(json.loads(row["channels"])) | set(channels))), ctx.tenant_id, gap_id])
