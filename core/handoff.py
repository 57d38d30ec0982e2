"""Handoffs to a person (H1): a reason from a closed catalog and the full conversation."""
from __future__ import annotations

import json

from core import conversation as conversations
from core.store import Store, utcnow
from core.tenancy import TenantContext

#: Built-in reasons; tenants extend the catalog in their settings (admin issue).
REASONS = {
    "not_covered_twice": "Two questions in a row that the knowledge base does not cover",
    "customer_request": "The customer asked for a person",
    "out_of_scope": "The request is outside what the agent may handle",
}


def create(ctx: TenantContext, store: Store, conversation_id: str, reason: str) -> int:
    """Hand a conversation to a person with its full transcript; returns the handoff id."""
    if reason not in REASONS:
        raise ValueError(f"Handoff reason {reason!r} is not in the catalog: {', '.join(REASONS)}.")
    conversations.require(ctx, store, conversation_id)
    transcript = conversations.turns(ctx, store, conversation_id)
    with store.write() as db:
        handoff_id = db.execute(
            "INSERT INTO handoffs (tenant_id, conversation_id, reason, status, created_at, transcript) VALUES (?,?,?,?,?,?)",
            [ctx.tenant_id, conversation_id, reason, "open", utcnow(), json.dumps(transcript, ensure_ascii=False, default=str)],
        ).lastrowid
    conversations.mark_handed_off(ctx, store, conversation_id)
    return handoff_id


def open_handoffs(ctx: TenantContext, store: Store) -> list[dict]:
    """The queue: open handoffs of this tenant, oldest first."""
    rows = store.query(
        "SELECT id, conversation_id, reason, status, created_at, transcript FROM handoffs WHERE tenant_id = ? AND status = 'open' ORDER BY id",
        [ctx.tenant_id],
    )
    for row in rows:
        row["transcript"] = json.loads(row["transcript"])
    return rows
