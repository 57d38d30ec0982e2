"""Handoffs to a person (H1): a reason from the tenant's closed catalog, the full conversation, the inbox
where staff reply and close, the state of the tenant's webhook, and the gap a ``not_covered*`` handoff
came from (so the backlog shows which gaps cost a person's time). Transcripts and replies are private logs:
retention empties what is older than the tenant's log retention, the handoff itself (reason, status, gap)
stays."""
from __future__ import annotations

import json

from core.base.errors import UserError
from core.base.store import Store
from core.channels import conversations
from core.tenancy import retention, settings as tenant_settings
from core.tenancy.context import AuthError, TenantContext

#: The built-in reasons (the agent itself uses them); the tenant's catalog adds its own.
REASONS = tenant_settings.REASONS
STATUSES = ("open", "closed")
MAX_REPLY = 4000
_COLUMNS = ("id, conversation_id, reason, status, created_at, transcript, gap_id, replies, closed_at, closed_by, "
            "webhook_status, webhook_attempts, webhook_error, webhook_at")


class HandoffError(UserError):
    """Bad input for a handoff; the message says what was wrong and what to do."""


def create(ctx: TenantContext, store: Store, conversation_id: str, reason: str, gap_id: int | None = None) -> int:
    """Hand a conversation to a person with its full transcript; returns the handoff id."""
    catalog = tenant_settings.handoff_reasons(ctx, store)
    if reason not in catalog:
        raise HandoffError(f"Handoff reason {reason!r} is not in this tenant's catalog: {', '.join(catalog)}.")
    conversations.require(ctx, store, conversation_id)
    transcript = conversations.turns(ctx, store, conversation_id)
    webhook = "pending" if tenant_settings.get(ctx, store).handoff_webhook_url else "none"
    with store.write() as db:
        handoff_id = db.execute(
            "INSERT INTO handoffs (tenant_id, conversation_id, reason, status, created_at, transcript, gap_id, "
            "webhook_status) VALUES (?,?,?,?,?,?,?,?)",
            [ctx.tenant_id, conversation_id, reason, "open", store.clock.stamp(),
             json.dumps(transcript, ensure_ascii=False, default=str), gap_id, webhook],
        ).lastrowid
    conversations.mark_handed_off(ctx, store, conversation_id)
    return handoff_id


def _decode(row: dict) -> dict:
    row["transcript"], row["replies"] = json.loads(row["transcript"]), json.loads(row["replies"])
    return row


def handoffs(ctx: TenantContext, store: Store, status: str | None = "open") -> list[dict]:
    """The inbox: this tenant's handoffs with ``status`` (None = all), oldest first."""
    if status is not None and status not in STATUSES:
        raise HandoffError(f"Unknown handoff status {status!r}; use one of {', '.join(STATUSES)}.")
    where, params = ("AND status = ?", [status]) if status else ("", [])
    rows = store.query(f"SELECT {_COLUMNS} FROM handoffs WHERE tenant_id = ? {where} ORDER BY id",
                       [ctx.tenant_id, *params])
    return [_decode(row) for row in rows]


def open_handoffs(ctx: TenantContext, store: Store) -> list[dict]:
    """The queue: open handoffs of this tenant, oldest first."""
    return handoffs(ctx, store, "open")


def get(ctx: TenantContext, store: Store, handoff_id: int) -> dict | None:
    rows = store.query(f"SELECT {_COLUMNS} FROM handoffs WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, handoff_id])
    return _decode(rows[0]) if rows else None


def require(ctx: TenantContext, store: Store, handoff_id: int) -> dict:
    found = get(ctx, store, handoff_id)
    if found is None:
        raise HandoffError(f"No handoff #{handoff_id} in this tenant; the inbox lists the existing ones.")
    return found


def _require_staff(ctx: TenantContext) -> None:
    if not (ctx.can("editor") or ctx.can("admin")):
        raise AuthError(f"Only an admin or an editor answers handoffs; '{ctx.actor}' is {ctx.role}.")


def reply(ctx: TenantContext, store: Store, handoff_id: int, text: str) -> dict:
    """A staff reply to the customer (the widget shows it in the conversation); the handoff stays open."""
    _require_staff(ctx)
    text = (text or "").strip()
    if not text:
        raise HandoffError("The reply is empty; write what the customer should read.")
    if len(text) > MAX_REPLY:
        raise HandoffError(f"The reply has {len(text):,} characters; the limit is {MAX_REPLY:,}. Shorten it.")
    with store.write() as db:
        current = require(ctx, store, handoff_id)
        if current["status"] != "open":
            raise HandoffError(f"Handoff #{handoff_id} is closed; reopen it to reply.")
        # numbered across the conversation, append-only, so a widget polling "after N" never misses one
        earlier = store.query("SELECT replies FROM handoffs WHERE tenant_id = ? AND conversation_id = ?",
                              [ctx.tenant_id, current["conversation_id"]])
        n = 1 + max((r.get("n", 0) for row in earlier for r in json.loads(row["replies"])), default=0)
        replies = current["replies"] + [{"n": n, "at": store.clock.stamp(), "by": ctx.actor, "text": text}]
        db.execute("UPDATE handoffs SET replies = ? WHERE tenant_id = ? AND id = ?",
                   [json.dumps(replies, ensure_ascii=False), ctx.tenant_id, handoff_id])
    return require(ctx, store, handoff_id)


def close(ctx: TenantContext, store: Store, handoff_id: int) -> dict:
    """Close a handoff (it leaves the open queue; its transcript and replies stay)."""
    _require_staff(ctx)
    with store.write() as db:
        require(ctx, store, handoff_id)
        db.execute("UPDATE handoffs SET status = 'closed', closed_at = ?, closed_by = ? WHERE tenant_id = ? AND id = ?",
                   [store.clock.stamp(), ctx.actor, ctx.tenant_id, handoff_id])
    return require(ctx, store, handoff_id)


def reopen(ctx: TenantContext, store: Store, handoff_id: int) -> dict:
    _require_staff(ctx)
    with store.write() as db:
        require(ctx, store, handoff_id)
        db.execute("UPDATE handoffs SET status = 'open', closed_at = NULL, closed_by = NULL "
                   "WHERE tenant_id = ? AND id = ?",
                   [ctx.tenant_id, handoff_id])
    return require(ctx, store, handoff_id)


def record_delivery(ctx: TenantContext, store: Store, handoff_id: int, status: str, attempts: int,
                    error: str | None = None) -> None:
    """The outcome of calling the tenant's webhook for this handoff (the inbox shows failures)."""
    with store.write() as db:
        db.execute("UPDATE handoffs SET webhook_status = ?, webhook_attempts = webhook_attempts + ?, "
                   "webhook_error = ?, webhook_at = ? WHERE tenant_id = ? AND id = ?",
                   [status, attempts, error, store.clock.stamp(), ctx.tenant_id, handoff_id])


def replies_for(ctx: TenantContext, store: Store, conversation_id: str, after: int = 0) -> list[dict]:
    """Staff replies in one conversation, for the customer's widget: numbered 1, 2, … across its handoffs in
    the order they were written, those after ``after``. Another tenant's or another customer's conversation
    answers as a missing one."""
    convo = conversations.get(ctx, store, conversation_id)
    if convo is None or (convo.customer_id or None) != (ctx.customer_id or None):
        raise HandoffError(f"No conversation '{conversation_id}'.")
    rows = store.query("SELECT replies FROM handoffs WHERE tenant_id = ? AND conversation_id = ? ORDER BY id",
                       [ctx.tenant_id, conversation_id])
    flat = sorted((r for row in rows for r in json.loads(row["replies"])), key=lambda r: r["n"])
    return [{"id": r["n"], "at": r["at"], "text": r["text"]} for r in flat if r["n"] > after and r["text"]]


def open_for(ctx: TenantContext, store: Store, conversation_id: str) -> int | None:
    """The open handoff of a conversation, if any (a conversation has at most one waiting for the team)."""
    rows = store.query("SELECT id FROM handoffs WHERE tenant_id = ? AND conversation_id = ? AND status = 'open' "
                       "ORDER BY id LIMIT 1", [ctx.tenant_id, conversation_id])
    return rows[0]["id"] if rows else None


def by_gap(ctx: TenantContext, store: Store) -> dict[int, dict[str, int]]:
    """For each gap that cost a person's time: how many handoffs it caused, and how many are still open."""
    rows = store.query("SELECT gap_id, COUNT(*) AS total, SUM(status = 'open') AS open FROM handoffs "
                       "WHERE tenant_id = ? AND gap_id IS NOT NULL GROUP BY gap_id", [ctx.tenant_id])
    return {row["gap_id"]: {"total": row["total"], "open": row["open"]} for row in rows}


def follow_merged_gap(ctx: TenantContext, store: Store, old_gap_id: int, new_gap_id: int) -> None:
    """Handoffs linked to a gap that was merged into another now link to that one."""
    with store.write() as db:
        db.execute("UPDATE handoffs SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",
                   [new_gap_id, ctx.tenant_id, old_gap_id])


def purge_before(ctx: TenantContext, store: Store, cutoff: str) -> dict[str, int]:
    """Retention: drop the transcript turns and empty the reply texts recorded before ``cutoff`` (a reply keeps
    its number, so the widget's numbering goes on); returns how many handoffs were emptied."""
    rows = store.query("SELECT id, transcript, replies FROM handoffs WHERE tenant_id = ? AND created_at < ?",
                       [ctx.tenant_id, cutoff])  # nothing in a younger handoff is older than its creation
    changed = []
    for row in rows:
        transcript = [turn for turn in json.loads(row["transcript"]) if str(turn.get("at", "")) >= cutoff]
        replies = [r if r["at"] >= cutoff else {"n": r["n"], "at": r["at"], "text": ""}
                   for r in json.loads(row["replies"])]
        if len(transcript) != len(json.loads(row["transcript"])) or replies != json.loads(row["replies"]):
            changed.append([json.dumps(transcript, ensure_ascii=False, default=str),
                            json.dumps(replies, ensure_ascii=False), ctx.tenant_id, row["id"]])
    with store.write() as db:
        for params in changed:
            db.execute("UPDATE handoffs SET transcript = ?, replies = ? WHERE tenant_id = ? AND id = ?", params)
    return {"transcripts": len(changed)}


retention.register(__name__, purge_before)
