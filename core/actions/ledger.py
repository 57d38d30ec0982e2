"""The card ledger (C4, this module's table ``card_ledger``): every proposal, decision, re-check verdict and
execution result, with who, when, channel and reason. Append-only; exportable as CSV."""
from __future__ import annotations

import csv
import io
import json

from core.base.store import Store
from core.tenancy.context import TenantContext

EVENTS = ("proposed", "approved", "rejected", "expired", "refused", "recheck", "executed", "failed", "repeated")
COLUMNS = ("card_id", "at", "actor", "channel", "event", "reason", "detail")


def append(db, ctx: TenantContext, card_id: str, at: str, event: str, reason: str = "", detail: dict | None = None,
           actor: str | None = None, channel: str | None = None) -> None:
    """One ledger row, written inside the caller's transaction (``db`` is the store's write connection)."""
    if event not in EVENTS:
        raise ValueError(f"unknown ledger event {event!r}")
    db.execute("INSERT INTO card_ledger (tenant_id, card_id, at, actor, channel, event, reason, detail) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               [ctx.tenant_id, card_id, at, actor or ctx.actor, channel or ctx.channel, event, reason[:500],
                json.dumps(detail or {}, ensure_ascii=False, default=str)])


def entries(ctx: TenantContext, store: Store, card_id: str | None = None, limit: int = 5000) -> list[dict]:
    """The ledger of one card (or of the tenant), oldest first."""
    where, args = "tenant_id = ?", [ctx.tenant_id]
    if card_id:
        where, args = where + " AND card_id = ?", [*args, card_id]
    rows = store.query(f"SELECT card_id, at, actor, channel, event, reason, detail FROM card_ledger WHERE {where} "
                       "ORDER BY id LIMIT ?", [*args, limit])
    return [{**row, "detail": json.loads(row["detail"] or "{}")} for row in rows]


def _cell(value) -> str:
    """A cell a spreadsheet shows as text: a customer's value starting with = + - @ is never run as a formula."""
    text = str(value)
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def as_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        row = {**row, "detail": json.dumps(row["detail"], ensure_ascii=False, sort_keys=True)}
        writer.writerow({key: _cell(row[key]) for key in COLUMNS})
    return out.getvalue()
