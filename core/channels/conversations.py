"""Conversations and turns (A4, A7): channels, budgets, history, the per-conversation counters of
the channel policy, the private question log (P4) and its retention. Every statement carries the tenant;
another tenant's conversation does not exist."""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from core.base.errors import UserError
from core.base.store import Store
from core.gaps import source_counts
from core.tenancy import retention
from core.tenancy.context import CHANNELS, TenantContext

MAX_MESSAGE_CHARS = 2000
MAX_HISTORY_TURNS = 12


class ConversationError(UserError):
    """Bad input for a conversation; the message says what was wrong and what to do."""


class MessageTooLong(ConversationError):
    """A message above the per-message budget (A7)."""


@dataclass(frozen=True)
class Conversation:
    id: str
    channel: str
    customer_id: str | None
    created_at: str
    uncovered: int
    handed_off: bool


def check_message(text: str) -> str:
    """The visitor's message, stripped; raises when empty or over MAX_MESSAGE_CHARS."""
    text = (text or "").strip()
    if not text:
        raise ConversationError("The message is empty; write a question.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise MessageTooLong(
            f"The message has {len(text)} characters; the limit is {MAX_MESSAGE_CHARS}. Shorten it or split it in two."
        )
    return text


def start(ctx: TenantContext, store: Store, channel: str, customer_id: str | None = None) -> Conversation:
    """Open a conversation on a channel (the customer id comes from the authenticated context when there is one)."""
    if channel not in CHANNELS:
        raise ConversationError(f"Channel {channel!r} is not known; use one of {', '.join(CHANNELS)}.")
    conversation_id = uuid.uuid4().hex[:16]
    now = store.clock.stamp()
    with store.write() as db:
        db.execute(
            "INSERT INTO conversations (tenant_id, id, channel, customer_id, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?)",
            [ctx.tenant_id, conversation_id, channel, customer_id or ctx.customer_id, now, now],
        )
    return get(ctx, store, conversation_id)  # type: ignore[return-value]


def get(ctx: TenantContext, store: Store, conversation_id: str) -> Conversation | None:
    rows = store.query(
        "SELECT id, channel, customer_id, created_at, uncovered, handed_off FROM conversations "
        "WHERE tenant_id = ? AND id = ?",
        [ctx.tenant_id, conversation_id],
    )
    if not rows:
        return None
    row = rows[0]
    return Conversation(row["id"], row["channel"], row["customer_id"], row["created_at"], row["uncovered"],
                        bool(row["handed_off"]))


def require(ctx: TenantContext, store: Store, conversation_id: str) -> Conversation:
    conversation = get(ctx, store, conversation_id)
    if conversation is None:
        raise ConversationError(f"No conversation '{conversation_id}'. Start a new one (omit the conversation id).")
    return conversation


def history(ctx: TenantContext, store: Store, conversation_id: str,
            turns: int = MAX_HISTORY_TURNS) -> list[tuple[str, str]]:
    """The last ``turns`` exchanges as (role, text) pairs, oldest first (A7: only these reach the model)."""
    rows = store.query(
        "SELECT question, answer FROM turns WHERE tenant_id = ? AND conversation_id = ? ORDER BY id DESC LIMIT ?",
        [ctx.tenant_id, conversation_id, turns],
    )
    out: list[tuple[str, str]] = []
    for row in reversed(rows):
        out.append(("user", row["question"]))
        if row["answer"]:
            out.append(("assistant", row["answer"]))
    return out


def evidence_ids(ctx: TenantContext, store: Store, conversation_id: str) -> list[str]:
    """Every chunk id a text-bearing tool returned earlier in this conversation (citable again)."""
    rows = store.query(
        "SELECT evidence_ids FROM turns WHERE tenant_id = ? AND conversation_id = ? ORDER BY id",
        [ctx.tenant_id, conversation_id],
    )
    seen: dict[str, None] = {}
    for row in rows:
        for cid in json.loads(row["evidence_ids"]):
            seen.setdefault(cid, None)
    return list(seen)


def record_turn(ctx: TenantContext, store: Store, conversation_id: str, *, question: str, status: str, answer: str,
                citations: list[dict], evidence: list[str], truncated: bool, provider: str, model: str,
                latency_ms: int, input_tokens: int, output_tokens: int, trace: dict, uncovered: bool) -> int:
    """Store one turn with its trace (A8); count uncovered questions for the channel policy, and the sources the
    answer cited (:mod:`core.gaps.source_counts`: counts that outlive the turn's retention). Returns the turn id."""
    # everything serialised before the write lock is taken: the lock is held for the inserts only
    row = [ctx.tenant_id, conversation_id, store.clock.stamp(), question, status, answer,
           json.dumps(citations, ensure_ascii=False), json.dumps(evidence), int(truncated), provider, model, latency_ms,
           input_tokens, output_tokens, json.dumps(trace, ensure_ascii=False, default=str)]
    with store.write() as db:
        turn_id = db.execute(
            "INSERT INTO turns (tenant_id, conversation_id, at, question, status, answer, citations, evidence_ids, "
            "truncated, provider, model, latency_ms, input_tokens, output_tokens, trace) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            row,
        ).lastrowid
        db.execute(
            "UPDATE conversations SET updated_at = ?, uncovered = uncovered + ? WHERE tenant_id = ? AND id = ?",
            [store.clock.stamp(), int(uncovered), ctx.tenant_id, conversation_id],
        )
        convo = get(ctx, store, conversation_id)
        if convo is not None and citations:
            source_counts.count_answer(ctx, store, convo.channel, citations)
    return turn_id


def get_turn(ctx: TenantContext, store: Store, conversation_id: str, turn_id: int) -> dict | None:
    """One turn of one of this tenant's conversations with its channel and language (None: no such turn there)."""
    rows = store.query(
        "SELECT t.id, t.conversation_id, c.channel, c.customer_id, t.question, t.status, t.answer, t.citations, "
        "t.provider, json_extract(t.trace, '$.language') AS language FROM turns t "
        "JOIN conversations c ON c.tenant_id = t.tenant_id AND c.id = t.conversation_id "
        "WHERE t.tenant_id = ? AND t.conversation_id = ? AND t.id = ?", [ctx.tenant_id, conversation_id, int(turn_id)])
    if not rows:
        return None
    row = rows[0]
    row["citations"] = json.loads(row["citations"])
    return row


def update_turn(ctx: TenantContext, store: Store, turn_id: int, *, status: str, answer: str, trace: dict) -> None:
    """A stored turn's final status, answer and trace (a handoff decided once the turn was stored)."""
    payload = json.dumps(trace, ensure_ascii=False, default=str)
    with store.write() as db:
        db.execute("UPDATE turns SET status = ?, answer = ?, trace = ? WHERE tenant_id = ? AND id = ?",
                   [status, answer, payload, ctx.tenant_id, turn_id])


def mark_handed_off(ctx: TenantContext, store: Store, conversation_id: str) -> None:
    with store.write() as db:
        db.execute("UPDATE conversations SET handed_off = 1 WHERE tenant_id = ? AND id = ?",
                   [ctx.tenant_id, conversation_id])


def turns(ctx: TenantContext, store: Store, conversation_id: str) -> list[dict]:
    """Every turn of a conversation with its trace, oldest first."""
    rows = store.query(
        "SELECT id, at, question, status, answer, citations, truncated, provider, model, latency_ms, trace FROM turns "
        "WHERE tenant_id = ? AND conversation_id = ? ORDER BY id",
        [ctx.tenant_id, conversation_id],
    )
    for row in rows:
        row["citations"], row["trace"] = json.loads(row["citations"]), json.loads(row["trace"])
    return rows


def log_question(ctx: TenantContext, store: Store, conversation_id: str, channel: str, language: str,
                 question: str) -> None:
    """The private question log (P4): written when a chat opens, before any answer, so turns that are cut,
    fail or are refused are still there. Read only through the admin token."""
    with store.write() as db:
        db.execute("INSERT INTO question_log (tenant_id, at, conversation_id, channel, customer_id, language, "
                   "question) VALUES (?,?,?,?,?,?,?)",
                   [ctx.tenant_id, store.clock.stamp(), conversation_id, channel, ctx.customer_id, language, question])


def _require_log_reader(ctx: TenantContext) -> None:
    if ctx.role != "admin":
        raise PermissionError("The private logs are for admins only.")


def question_log(ctx: TenantContext, store: Store, limit: int = 100, before: int | None = None) -> list[dict]:
    """Logged questions, newest first (``before``: only ids below it, to page back)."""
    _require_log_reader(ctx)
    where, params = ("AND id < ?", [before]) if before else ("", [])
    return store.query(f"SELECT id, at, conversation_id, channel, customer_id, language, question FROM question_log "
                       f"WHERE tenant_id = ? {where} ORDER BY id DESC LIMIT ?", [ctx.tenant_id, *params, limit])


def turn_log(ctx: TenantContext, store: Store, limit: int = 50, before: int | None = None,
             status: str | None = None) -> list[dict]:
    """Recorded turns with their answer, citations and trace, newest first (the learning log)."""
    _require_log_reader(ctx)
    clauses, params = [], []
    if before:
        clauses.append("AND t.id < ?")
        params.append(before)
    if status:
        clauses.append("AND t.status = ?")
        params.append(status)
    rows = store.query(
        "SELECT t.id, t.at, t.conversation_id, c.channel, c.customer_id, t.question, t.status, t.answer, t.citations, "
        "t.truncated, t.provider, t.model, t.latency_ms, t.input_tokens, t.output_tokens, t.trace FROM turns t "
        "JOIN conversations c ON c.tenant_id = t.tenant_id AND c.id = t.conversation_id "
        f"WHERE t.tenant_id = ? {' '.join(clauses)} ORDER BY t.id DESC LIMIT ?", [ctx.tenant_id, *params, limit])
    for row in rows:
        row["citations"], row["trace"], row["truncated"] = (json.loads(row["citations"]), json.loads(row["trace"]),
                                                             bool(row["truncated"]))
    return rows


def turns_citing(ctx: TenantContext, store: Store, chunk_ids: list[str], base: str, since: str,
                 limit: int) -> list[dict]:
    """Turns since ``since`` whose citations name one of ``chunk_ids`` or a path at or below ``base``, newest
    first (what an edit there would change: the impact preview)."""
    return store.query(
        "SELECT t.id, t.conversation_id, t.at, t.question, t.answer, t.status, t.citations FROM turns t "
        "WHERE t.tenant_id = ? AND t.at >= ? AND EXISTS (SELECT 1 FROM json_each(t.citations) c "
        "  WHERE json_extract(c.value, '$.id') IN (SELECT value FROM json_each(?)) "
        "  OR json_extract(c.value, '$.path') = ? "
        "  OR (json_extract(c.value, '$.path') >= ? AND json_extract(c.value, '$.path') < ?)) "
        "ORDER BY t.at DESC, t.id DESC LIMIT ?",
        [ctx.tenant_id, since, json.dumps(chunk_ids), base, base + "/", base + "0", limit],
    )


def purge_before(ctx: TenantContext, store: Store, cutoff: str) -> dict[str, int]:
    """Retention: delete this tenant's turns and logged questions recorded before ``cutoff``, and the
    conversations idle since then (their channel and customer id go with them)."""
    with store.write() as db:
        turns_purged = db.execute("DELETE FROM turns WHERE tenant_id = ? AND at < ?", [ctx.tenant_id, cutoff]).rowcount
        questions = db.execute("DELETE FROM question_log WHERE tenant_id = ? AND at < ?",
                               [ctx.tenant_id, cutoff]).rowcount
        idle = db.execute(
            "DELETE FROM conversations WHERE tenant_id = ? AND updated_at < ? AND NOT EXISTS (SELECT 1 FROM turns t "
            "WHERE t.tenant_id = conversations.tenant_id AND t.conversation_id = conversations.id)",
            [ctx.tenant_id, cutoff]).rowcount
    return {"turns": turns_purged, "questions": questions, "conversations": idle}


retention.register(__name__, purge_before)
