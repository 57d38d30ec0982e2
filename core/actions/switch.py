"""The kill switches of actions (C2): global (``COBERTURA_KILL_SWITCH=1``), the tenant's agent kill switch, and the
tenant's actions switch (this module's table ``actions_switch``). Any of them stops every read action, every new
card and every approved card not executed yet; checked at every click, right before executing."""
from __future__ import annotations

from core.base.config import Settings
from core.base.store import Store
from core.tenancy import settings as tenant_settings
from core.tenancy.context import AuthError, TenantContext


def actions_off(ctx: TenantContext, store: Store) -> dict | None:
    """The tenant's actions switch when it is off: {reason, changed_by, changed_at}; None when actions may run."""
    rows = store.query("SELECT off, reason, changed_by, changed_at FROM actions_switch WHERE tenant_id = ?",
                       [ctx.tenant_id])
    return rows[0] if rows and rows[0]["off"] else None


def stopped(ctx: TenantContext, store: Store, settings: Settings) -> str | None:
    """Why no action may run for this tenant now, in words a customer may read (who switched it off, and their
    note, stay on the Actions page and in :func:`actions_off`), or None."""
    if settings.kill_switch:
        return "the global kill switch is on (COBERTURA_KILL_SWITCH=1)"
    if tenant_settings.get(ctx, store).kill_switch:
        return "the business has switched its assistant off (kill switch)"
    if actions_off(ctx, store):
        return "the business has switched its actions off"
    return None


def set_actions_off(ctx: TenantContext, store: Store, off: bool, reason: str = "") -> None:
    """Switch the tenant's actions off (or on again); admins only."""
    if ctx.role != "admin":
        raise AuthError("Only an admin of the tenant can switch its actions on or off.")
    with store.write() as db:
        db.execute("INSERT INTO actions_switch (tenant_id, off, reason, changed_by, changed_at) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT (tenant_id) DO UPDATE SET off = excluded.off, reason = excluded.reason, "
                   "changed_by = excluded.changed_by, changed_at = excluded.changed_at",
                   [ctx.tenant_id, int(bool(off)), (reason or "").strip()[:200], ctx.actor, store.clock.stamp()])
