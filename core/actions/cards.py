"""Confirmation cards (C1-C3; this module's tables ``cards`` and ``card_executions``).

The only path from a model to a change of data: a write tool *proposes* (:func:`propose`) a card that freezes the
operation, its normalised parameters, a preview and the state it was proposed against. Nothing runs until a person
clicks: the identified customer the card belongs to, or staff of the tenant (admin, editor). At the click
(:func:`decide`) the checks run again, in this order: the card's expiry and the kill switches inside one
``BEGIN IMMEDIATE`` transaction that also inserts the card's execution row (its UNIQUE card id is the idempotency
key: of any number of concurrent clicks, in threads or processes, exactly one wins); then the current state is read
again and compared with the snapshot (and the operation's ``state_schema``); then the kill switches once more; only
then the executor runs the *frozen* parameters, once, with the idempotency key ``card-<id>``. Its result is stored
on the card, so a repeated click answers the same status and body. Every step is a ledger row
(:mod:`core.actions.ledger`). Another customer's or tenant's card answers exactly like a missing one.
"""
from __future__ import annotations

import json
import secrets
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from core.actions import ledger, params as params_mod
from core.actions.model import ActionError, ActionFault, Execution, Operation
from core.base.store import Store
from core.tenancy.context import TenantContext

STAFF = ("admin", "editor")
FINAL = ("executed", "failed", "rejected", "expired", "refused")
STATUSES = ("proposed", "executing", *FINAL)
POLL_SECONDS = 0.05


class CardNotFound(ActionError):
    """No such card for whoever asks (a foreign card answers exactly so)."""

    def __init__(self) -> None:
        super().__init__("There is no such card. Cards are listed with `python -m core cards SLUG` or on the "
                         "Cards page.")


@dataclass(frozen=True)
class Card:
    id: str
    conversation_id: str
    customer_id: str | None
    channel: str
    operation: str
    title: str
    params: dict
    preview: list
    snapshot: dict | None
    status: str
    reason: str
    result: dict | None
    created_at: str
    expires_at: str
    decided_at: str | None = None
    decided_by: str | None = None

    def event(self) -> dict:
        """The SSE ``card`` payload."""
        return {"id": self.id, "operation": self.operation, "title": self.title, "preview": self.preview,
                "params": self.params, "expires_at": self.expires_at, "status": self.status}

    def as_dict(self) -> dict:
        return {**self.event(), "conversation_id": self.conversation_id, "customer_id": self.customer_id,
                "channel": self.channel, "snapshot": self.snapshot, "reason": self.reason, "result": self.result,
                "created_at": self.created_at, "decided_at": self.decided_at, "decided_by": self.decided_by}


@dataclass(frozen=True)
class Decision:
    """What a click answered. ``as_dict`` is the body every click on this card gets once the decision is taken."""

    card: Card
    outcome: str  # executed | failed | rejected | expired | refused | consumed | in_progress
    reason: str
    repeated: bool = False

    def as_dict(self) -> dict:
        return {"card": {"id": self.card.id, "status": self.card.status, "result": self.card.result,
                         "reason": self.reason}}


def _card(row: dict) -> Card:
    return Card(row["id"], row["conversation_id"], row["customer_id"], row["channel"], row["operation"], row["title"],
                json.loads(row["params"]), json.loads(row["preview"]),
                json.loads(row["snapshot"]) if row["snapshot"] is not None else None, row["status"], row["reason"],
                json.loads(row["result"]) if row["result"] is not None else None, row["created_at"], row["expires_at"],
                row["decided_at"], row["decided_by"])


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def propose(ctx: TenantContext, store: Store, op: Operation, params: dict, *, conversation_id: str, preview: list,
            snapshot: dict | None, minutes: float, title: str = "") -> Card:
    """Freeze a proposal as a card (status ``proposed``); the caller has validated ``params`` against the schema."""
    if not ctx.customer_id:
        raise ActionError("Only an identified customer's conversation can propose a card (anonymous visitors never).")
    checked = params_mod.check(op.parameters, params)
    if not checked.ok:
        wrong = "; ".join(checked.problems or checked.missing)
        raise ActionError(f"The parameters of {op.name} are not valid: {wrong}")
    now = store.clock.now()
    row = {"id": "c" + secrets.token_hex(10), "tenant_id": ctx.tenant_id, "conversation_id": conversation_id or "",
           "customer_id": ctx.customer_id, "channel": ctx.channel, "operation": op.name,
           "definition": definition_of(op), "title": title or op.title,
           "params": _dumps(checked.params), "preview": _dumps(preview),
           "snapshot": None if snapshot is None else _dumps(snapshot), "status": "proposed", "reason": "",
           "result": None, "created_at": _iso(now), "expires_at": _iso(now + timedelta(minutes=minutes)),
           "decided_at": None, "decided_by": None}
    with store.write() as db:
        db.execute(f"INSERT INTO cards ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        ledger.append(db, ctx, row["id"], row["created_at"], "proposed",
                      detail={"operation": op.name, "params": checked.params, "snapshot": snapshot})
    return _card(row)


def definition_of(op: Operation) -> str:
    """The operation as the card freezes it (what it runs and against which rules; titles and examples aside): an
    admin's later edit of the action makes the card refuse instead of running the new definition."""
    frozen = {"name": op.name, "source": str(op.source), "kind": str(op.kind), "parameters": op.parameters,
              "config": op.config}
    return _dumps(frozen)


def _iso(moment: datetime) -> str:
    from core.base.clock import iso

    return iso(moment)


def _row(ctx: TenantContext, db_or_store, card_id: str) -> dict | None:
    sql = "SELECT * FROM cards WHERE tenant_id = ? AND id = ?"
    if isinstance(db_or_store, Store):
        rows = db_or_store.query(sql, [ctx.tenant_id, card_id])
        return rows[0] if rows else None
    cursor = db_or_store.execute(sql, [ctx.tenant_id, card_id])
    found = cursor.fetchone()
    return dict(zip([c[0] for c in cursor.description], found)) if found else None


def _may_see(ctx: TenantContext, card: dict) -> bool:
    if ctx.customer_id:
        return card["customer_id"] == ctx.customer_id
    return ctx.role in STAFF


def get(ctx: TenantContext, store: Store, card_id: str) -> Card:
    """The card, if whoever asks may see it: its own customer, or staff of the tenant; else CardNotFound."""
    row = _row(ctx, store, str(card_id or "")[:64])
    if row is None or not _may_see(ctx, row):
        raise CardNotFound()
    return _card(row)


def listing(ctx: TenantContext, store: Store, status: str | None = None, limit: int = 200) -> list[Card]:
    """The tenant's cards, newest first (staff; a customer sees only their own)."""
    if status and status not in STATUSES:
        raise ActionError(f"Unknown card status {status!r}; use one of {', '.join(STATUSES)}.")
    where, args = ["tenant_id = ?"], [ctx.tenant_id]
    if ctx.customer_id:
        where.append("customer_id = ?")
        args.append(ctx.customer_id)
    elif ctx.role not in STAFF:
        return []
    if status:
        where.append("status = ?")
        args.append(status)
    rows = store.query(f"SELECT * FROM cards WHERE {' AND '.join(where)} ORDER BY created_at DESC, id LIMIT ?",
                       [*args, limit])
    return [_card(row) for row in rows]


_STORED = {"executed": "executed", "failed": "failed", "rejected": "rejected", "expired": "expired",
           "refused": "refused"}


def _stored(card: Card, approve: bool, repeated: bool = True) -> Decision:
    """The decision a card already carries, for a click that comes after it was taken."""
    outcome = _STORED.get(card.status, "in_progress")
    if (approve and card.status == "rejected") or (not approve and card.status in ("executed", "failed")):
        outcome = "consumed"
    return Decision(card, outcome, card.reason, repeated)


def _set(db, ctx: TenantContext, card_id: str, **values) -> None:
    sets = ", ".join(f"{k} = ?" for k in values)
    db.execute(f"UPDATE cards SET {sets} WHERE tenant_id = ? AND id = ?",
               [*(_dumps(v) if isinstance(v, (dict, list)) else v for v in values.values()), ctx.tenant_id,
                card_id])


def _final(ctx: TenantContext, store: Store, card_id: str, status: str, reason: str, event: str,
           result: dict | None = None, detail: dict | None = None) -> Card:
    with store.write() as db:
        _set(db, ctx, card_id, status=status, reason=reason, result=result)
        db.execute("UPDATE card_executions SET finished_at = ? WHERE card_id = ? AND tenant_id = ?",
                   [store.clock.stamp(), card_id, ctx.tenant_id])
        ledger.append(db, ctx, card_id, store.clock.stamp(), event, reason, detail)
        return _card(_row(ctx, db, card_id))


def reject(ctx: TenantContext, store: Store, card_id: str) -> Decision:
    """A person refuses the card: it never runs."""
    get(ctx, store, card_id)
    with store.write() as db:
        row = _row(ctx, db, card_id)
        if row["status"] != "proposed":
            decided = _stored(_card(row), approve=False)
            ledger.append(db, ctx, card_id, store.clock.stamp(), "repeated", decided.reason,
                          {"click": "reject", "outcome": decided.outcome, "status": row["status"]})
            return decided
        now = store.clock.stamp()
        if _expired(store, row):
            _set(db, ctx, card_id, status="expired", reason="the card expired before anyone decided")
            ledger.append(db, ctx, card_id, now, "expired", "the card expired before anyone decided")
            return Decision(_card(_row(ctx, db, card_id)), "expired", "the card expired before anyone decided")
        reason = "the card was rejected; nothing was changed"  # who rejected it: decided_by and the ledger
        _set(db, ctx, card_id, status="rejected", reason=reason, decided_at=now, decided_by=ctx.actor)
        ledger.append(db, ctx, card_id, now, "rejected", reason)
        return Decision(_card(_row(ctx, db, card_id)), "rejected", reason)


def _expired(store: Store, row: dict) -> bool:
    return store.clock.now() >= datetime.fromisoformat(row["expires_at"])


def _claim(ctx: TenantContext, store: Store, card_id: str, stopped: Callable[[], str | None]) -> Decision | bool:
    """Inside one BEGIN IMMEDIATE: True when this click won the right to execute; False when another click holds
    it (wait for its result); a Decision when the card cannot run (expired, switched off, decided already)."""
    with store.write() as db:
        row = _row(ctx, db, card_id)
        if row["status"] == "executing":
            return False
        if row["status"] != "proposed":
            return _stored(_card(row), approve=True)
        now = store.clock.stamp()
        if _expired(store, row):
            reason = "the card expired before it was approved; ask again for a new one"
            _set(db, ctx, card_id, status="expired", reason=reason)
            ledger.append(db, ctx, card_id, now, "expired", reason)
            return Decision(_card(_row(ctx, db, card_id)), "expired", reason)
        why = stopped()
        if why:
            reason = f"not executed: {why}"
            _set(db, ctx, card_id, status="refused", reason=reason, decided_at=now, decided_by=ctx.actor)
            ledger.append(db, ctx, card_id, now, "refused", reason)
            return Decision(_card(_row(ctx, db, card_id)), "refused", reason)
        try:
            db.execute("INSERT INTO card_executions (card_id, tenant_id, claimed_by, started_at) VALUES (?, ?, ?, ?)",
                       [card_id, ctx.tenant_id, ctx.actor, now])
        except sqlite3.IntegrityError:  # a click of another process got there first
            return False
        _set(db, ctx, card_id, status="executing", decided_at=now, decided_by=ctx.actor)
        ledger.append(db, ctx, card_id, now, "approved", "approved")
        return True


def _frozen_definition(ctx: TenantContext, store: Store, card_id: str) -> str:
    return store.query("SELECT definition FROM cards WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, card_id])[0][
        "definition"]


def _wait(ctx: TenantContext, store: Store, card_id: str, seconds: float) -> Decision:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        card = _card(_row(ctx, store, card_id))
        if card.status != "executing":
            return _stored(card, approve=True)
        time.sleep(POLL_SECONDS)
    card = _card(_row(ctx, store, card_id))
    return _stored(card, approve=True) if card.status != "executing" else Decision(
        card, "in_progress", "another approval of this card is executing it; ask again in a moment", True)


def recheck(snapshot: dict | None, state: dict | None, op: Operation) -> str | None:
    """Why the card may not run against the current ``state`` (naming what changed), or None."""
    if snapshot is not None and _dumps(snapshot) != _dumps(state):
        changed = sorted(k for k in set(snapshot or {}) | set(state or {})
                         if (snapshot or {}).get(k) != (state or {}).get(k)) if isinstance(state, dict) else []
        detail = "; ".join(f"{k} was {(snapshot or {}).get(k)!r}, now {(state or {}).get(k)!r}" for k in changed[:5])
        return "the state changed since the card was proposed" + (f" ({detail})" if detail else "")
    schema = op.config.get("state_schema")
    problems = params_mod.state_problems(schema, state) if schema and state is not None else []
    return f"the current state does not allow it ({'; '.join(problems[:3])})" if problems else None


@dataclass(frozen=True)
class Runner:
    """What executing a card needs: its operation and executor, the kill switches, how long to wait for another
    click's execution."""

    operation: Callable[[str], Operation | None]
    executor: Callable[[Operation], object]
    stopped: Callable[[], str | None]
    wait_seconds: float = 35.0


def approve(ctx: TenantContext, store: Store, card_id: str, runner: Runner) -> Decision:
    """A person approves the card: the checks run again and the frozen card executes at most once."""
    card = get(ctx, store, card_id)
    claimed = _claim(ctx, store, card.id, runner.stopped)
    if claimed is False:
        return _noted(ctx, store, _wait(ctx, store, card.id, runner.wait_seconds), "approve")
    if isinstance(claimed, Decision):
        return _noted(ctx, store, claimed, "approve")
    return _run(ctx, store, card, runner)


def _noted(ctx: TenantContext, store: Store, decision: Decision, click: str) -> Decision:
    """A click that found the decision taken leaves a ledger row too (who clicked again, what they got)."""
    if decision.repeated:
        with store.write() as db:
            ledger.append(db, ctx, decision.card.id, store.clock.stamp(), "repeated", decision.reason,
                          {"click": click, "outcome": decision.outcome, "status": decision.card.status})
    return decision


def _refused(ctx: TenantContext, store: Store, card: Card, why: str) -> Decision:
    return Decision(_final(ctx, store, card.id, "refused", why, "refused"), "refused", why)


def _run(ctx: TenantContext, store: Store, card: Card, runner: Runner) -> Decision:
    """The claimed card, from the re-checks to the stored result; whatever fails, the card ends settled."""
    op = runner.operation(card.operation)
    if op is None or not op.enabled:
        return _refused(ctx, store, card, f"the operation {card.operation} no longer exists or was disabled")
    if definition_of(op) != _frozen_definition(ctx, store, card.id):
        return _refused(ctx, store, card, f"the operation {card.operation} was changed since the card was proposed; "
                        "ask again for a new card")
    try:
        executor = runner.executor(op)
        state = executor.current_state(ctx, op, card.params, card.customer_id)
    except ActionFault as exc:
        return _refused(ctx, store, card, f"the current state could not be read again ({exc}); nothing was changed")
    except Exception as exc:  # a broken state reader must not leave the card executing for ever
        return _refused(ctx, store, card, f"the current state could not be read again ({exc.__class__.__name__}); "
                        "nothing was changed")
    problem = recheck(card.snapshot, state, op)
    with store.write() as db:
        ledger.append(db, ctx, card.id, store.clock.stamp(), "recheck", problem or "the state is as proposed",
                      {"ok": problem is None, "state": state})
    if problem:
        return _refused(ctx, store, card, problem)
    why = runner.stopped()  # switched off between the approval and now: approved cards stop too
    if why:
        return _refused(ctx, store, card, f"not executed: {why}")
    try:
        done = executor.execute(ctx, op, card.params, card.customer_id, f"card-{card.id}")
    except Exception as exc:  # an executor must not raise; if one does, the card failed and says so
        done = Execution(False, "error", None, f"the operation failed ({exc.__class__.__name__})")
    status = "executed" if done.ok else "failed"
    reason = done.message or ("done" if done.ok else "the operation failed")
    final = _final(ctx, store, card.id, status, reason, status, done.as_dict(), {"status": done.status})
    return Decision(final, status, reason)
