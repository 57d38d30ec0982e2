"""The pre-backlog ``gap_events`` table (raw questions, before masking existed), adopted into the backlog once.

A mixin of :class:`core.gaps.backlog.Backlog`, run when a process opens the data dir (:mod:`core.runtime`); this
module owns ``gap_events``, and records through the backlog's own :meth:`record`, so every adopted question is
masked and merged like a new one.
"""
from __future__ import annotations

from datetime import datetime

from core.tenancy.context import local_operator
from core.tenancy.tenants import list_tenants


class Adoption:
    def adopt_raw_events(self) -> int:
        """Move rows of the pre-backlog ``gap_events`` table (raw questions) into the backlog, masked.

        Each row is recorded as a variant at its original time and then deleted, so raw text leaves the
        disk; a row whose masking fails is deleted too (fail closed: nothing unmasked is kept)."""
        from core.gaps.backlog import UNCOVERED_REASONS  # the backlog module imports this one

        moved = 0
        tenant_ids = [r["tenant_id"] for r in self.store.query("SELECT DISTINCT tenant_id FROM gap_events")]
        slugs = {t["id"]: t["slug"] for t in list_tenants(self.store)} if tenant_ids else {}
        for slug in (slugs[i] for i in tenant_ids if i in slugs):
            ctx = local_operator(self.store, slug, "migration")
            for row in self.store.query("SELECT * FROM gap_events WHERE tenant_id = ? ORDER BY id", [ctx.tenant_id]):
                at = datetime.fromisoformat(row["at"])
                then = type(self)(self.store, self.embedder, self.tuning, clock=lambda at=at: at)  # recorded as of then
                reason = row["reason"] if row["reason"] in UNCOVERED_REASONS else "not_covered"
                if then.record(ctx, row["question"], row["language"], row["channel"], row["conversation_id"], reason):
                    moved += 1
                with self.store.write() as db:
                    db.execute("DELETE FROM gap_events WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, row["id"]])
        return moved
