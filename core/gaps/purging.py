"""Retention runs of the backlog: how long samples are kept, and the purge of one tenant or of all of them.

A mixin of :class:`core.gaps.backlog.Backlog` (it uses the backlog's store, clock and ``_purge_samples``, whose SQL
stays in :mod:`core.gaps.backlog`, the owner of the gap tables). The private logs of the other packages (turns,
logged questions, handoff transcripts, answer feedback) are purged through :mod:`core.tenancy.retention`, where
each owning module registers its purge.
"""
from __future__ import annotations

import time

from core.gaps.model import GapError
from core.tenancy import retention, tenants
from core.tenancy.context import AuthError, TenantContext, local_operator
from core.tenancy.tenants import list_tenants

DEFAULT_RETENTION_DAYS = 30


class Purging:
    def retention_days(self, ctx: TenantContext) -> int:
        days = tenants.retention_days(ctx, self.store)
        return days if days is not None else DEFAULT_RETENTION_DAYS

    def set_retention_days(self, ctx: TenantContext, days: int) -> None:
        if not ctx.can("admin"):
            raise AuthError("Only an admin can change how long samples are kept.")
        if not 1 <= int(days) <= 3650:
            raise GapError(f"Retention must be between 1 and 3650 days; got {days}.")
        tenants.set_retention_days(ctx, self.store, int(days))

    def purge(self, ctx: TenantContext) -> int:
        """Retention for this tenant (:meth:`purge_tenant`); returns the number of gap samples purged."""
        return self.purge_tenant(ctx)["samples"]

    def purge_tenant(self, ctx: TenantContext, compact: bool = True) -> dict[str, int]:
        """Delete this tenant's gap samples older than its sample retention and its private logs (turns,
        logged questions, handoff transcripts: :mod:`core.tenancy.retention`) older than its log retention.
        The entries, their counts and the daily trend stay. ``compact`` pushes the purged bytes out of the files."""
        self._purged_at[ctx.tenant_id] = time.monotonic()
        counts = {"samples": self._purge_samples(ctx), **retention.purge_private_logs(ctx, self.store, self.clock())}
        if compact and (any(counts.values()) or self._compact_pending):
            self._compact_pending = not retention.compact(self.store)
        return counts

    def purge_all(self) -> dict[str, dict[str, int]]:
        """Purge every tenant, then compact once (the app calls this on start and on a schedule; ``python -m
        core purge``): {slug: {what: rows purged}}."""
        out = {t["slug"]: self.purge_tenant(local_operator(self.store, t["slug"], "retention"), compact=False)
               for t in sorted(list_tenants(self.store), key=lambda t: t["id"])}
        self._compact_pending = not retention.compact(self.store)
        return out
