"""Answer feedback: a visitor's 👍/👎 on one answer, the loop that brings a wrong answer that passed the gate
to an editor.

One rating per turn (``answer_feedback``, this module's table): a second one replaces the first. The optional
reason is free text from a visitor, so it is masked (:mod:`core.gaps.pii`) before anything is stored, and a reason
whose masking fails is dropped (fail closed), never kept raw. A 👎 on an *answered* turn lands on the backlog as a
gap of kind ``not_helpful`` ("answered but not helpful", :mod:`core.gaps.model`): the masked question is its
variant, merged like any uncovered question but only with gaps of its own kind, and this row keeps the answer
and its citations for the editor and for the replay (:mod:`core.gaps.replay` checks the answer changed). A 👍
that replaces a 👎 takes the variant back (:meth:`core.gaps.backlog.Backlog.withdraw`): the count follows.
Refused and partly answered turns are already on the backlog as ``uncovered`` gaps: their 👎 is counted, not
recorded twice.

What stays and for how long: rating, channel, status and the cited paths stay (the per-source counts of
:mod:`core.gaps.source_counts` read them, so the purge of the turns leaves those counts alone); the masked
reason and the answer are private-log text, purged with the tenant's log retention (registered below with
:mod:`core.tenancy.retention`). The question itself is stored only as the gap's masked sample, under the
sample retention.

The turn is looked up by the channel layer (:mod:`core.channels.ratings`), which owns the turns: this module
receives it as a :class:`RatedTurn`.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field

from core.base.store import Store
from core.gaps import pii
from core.gaps.model import NOT_HELPFUL, GapError
from core.tenancy import retention
from core.tenancy.context import TenantContext

log = logging.getLogger(__name__)

RATINGS = ("up", "down")
MAX_REASON_CHARS = 500
#: the turn statuses whose 👎 opens (or joins) a not-helpful gap: an answer the gate released whole
LANDS_ON_BACKLOG = ("answered",)
_LOCK = threading.Lock()  # one rating at a time per process: a double click never records two variants


class FeedbackError(GapError):
    """A rating that cannot be recorded as given; the message says what to send instead."""


@dataclass(frozen=True)
class RatedTurn:
    """The turn being rated, as the turn log keeps it (the question raw: the backlog masks it)."""

    turn_id: int
    conversation_id: str
    channel: str
    language: str
    status: str
    question: str
    answer: str
    citations: list[dict] = field(default_factory=list)
    provider: str = ""


@dataclass(frozen=True)
class Feedback:
    turn_id: int
    rating: str
    reason: str | None  # masked; None when none was given, masking failed, or retention purged it
    gap_id: int | None  # the not-helpful gap the 👎 is on now (merges move it), None when not on the backlog
    variant_id: int | None
    status: str
    channel: str
    at: str
    updated_at: str

    def as_dict(self) -> dict:
        return {"recorded": True, "rating": self.rating, "gap_id": self.gap_id}


def check_rating(rating: object) -> str:
    if rating not in RATINGS:
        raise FeedbackError(f"The rating is {rating!r}; send \"up\" (the answer helped) or \"down\" (it did not).")
    return str(rating)


def check_reason(reason: object) -> str | None:
    """The reason stripped (None when empty); refused when it is not text or longer than MAX_REASON_CHARS."""
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise FeedbackError("The reason must be text (or left out).")
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise FeedbackError(f"The reason has {len(reason)} characters; the limit is {MAX_REASON_CHARS}. Shorten it.")
    return reason or None


def _masked(reason: str | None, language: str) -> str | None:
    if reason is None:
        return None
    try:
        return pii.mask(reason, language).text
    except pii.MaskingError as exc:
        log.error("A feedback reason was dropped: %s", exc)  # the message holds no input text
        return None


def record(ctx: TenantContext, store: Store, backlog, turn: RatedTurn, rating: str,
           reason: str | None = None) -> Feedback:
    """Record (or replace) the rating of one turn; a 👎 on an answered turn lands on the backlog."""
    rating, reason = check_rating(rating), check_reason(reason)
    masked = _masked(reason, turn.language)
    lands = rating == "down" and turn.status in LANDS_ON_BACKLOG
    with _LOCK:
        before = get(ctx, store, turn.turn_id, backlog)
        variant_id = before.variant_id if before else None
        if variant_id is not None and backlog.variant_gap(ctx, variant_id) is None:
            variant_id = None  # its gap went meanwhile: a new 👎 records afresh
        if lands and variant_id is None:
            recorded = backlog.record_variant(ctx, turn.question, turn.language, turn.channel, turn.conversation_id,
                                              NOT_HELPFUL)
            variant_id = recorded[1] if recorded else None
        elif not lands and variant_id is not None:
            backlog.withdraw(ctx, variant_id)
            variant_id = None
        cited = [{"id": c.get("id", ""), "path": c.get("path", ""), "title": c.get("title", ""),
                  "url": c.get("url", "")} for c in turn.citations]
        now = store.clock.stamp()
        with store.write() as db:
            db.execute(
                "INSERT INTO answer_feedback (tenant_id, turn_id, conversation_id, channel, language, status, "
                "provider, rating, reason, answer, citations, variant_id, at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT (tenant_id, turn_id) DO UPDATE SET rating = excluded.rating, reason = excluded.reason, "
                "answer = excluded.answer, variant_id = excluded.variant_id, updated_at = excluded.updated_at",
                [ctx.tenant_id, int(turn.turn_id), turn.conversation_id, turn.channel, turn.language, turn.status,
                 turn.provider, rating, masked, turn.answer if rating == "down" else None,
                 json.dumps(cited, ensure_ascii=False), variant_id, now, now])
    return get(ctx, store, turn.turn_id, backlog)  # type: ignore[return-value]


_COLUMNS = "turn_id, rating, reason, variant_id, status, channel, at, updated_at"


def get(ctx: TenantContext, store: Store, turn_id: int, backlog=None) -> Feedback | None:
    """This tenant's rating of a turn (``backlog``: to name the gap its 👎 is on now)."""
    rows = store.query(f"SELECT {_COLUMNS} FROM answer_feedback WHERE tenant_id = ? AND turn_id = ?",
                       [ctx.tenant_id, int(turn_id)])
    if not rows:
        return None
    row = rows[0]
    gap_id = backlog.variant_gap(ctx, row["variant_id"]) if backlog and row["variant_id"] is not None else None
    return Feedback(row["turn_id"], row["rating"], row["reason"], gap_id, row["variant_id"], row["status"],
                    row["channel"], row["at"], row["updated_at"])


def for_variants(ctx: TenantContext, store: Store, variant_ids: list[int]) -> list[dict]:
    """The 👎 behind these gap variants, newest first: reason, answer and citations (text None once purged)."""
    if not variant_ids:
        return []
    rows = store.query(
        "SELECT turn_id, variant_id, channel, language, status, provider, reason, answer, citations, at, updated_at "
        "FROM answer_feedback WHERE tenant_id = ? AND rating = 'down' AND variant_id IN "
        "(SELECT value FROM json_each(?)) ORDER BY updated_at DESC, id DESC",
        [ctx.tenant_id, json.dumps([int(v) for v in variant_ids])])
    for row in rows:
        row["citations"] = json.loads(row["citations"])
    return rows


def ratings_by_path(ctx: TenantContext, store: Store) -> dict[str, dict[str, int]]:
    """{cited path: {"helpful": n, "unhelpful": n}} over the rated answers to visitors (Sandbox rehearsals aside)."""
    rows = store.query(
        "SELECT json_extract(c.value, '$.path') AS cited, "
        "COUNT(DISTINCT CASE WHEN f.rating = 'up' THEN f.id END) AS helpful, "
        "COUNT(DISTINCT CASE WHEN f.rating = 'down' THEN f.id END) AS unhelpful "
        "FROM answer_feedback f, json_each(f.citations) c WHERE f.tenant_id = ? AND f.channel != 'sandbox' "
        "AND COALESCE(json_extract(c.value, '$.path'), '') != '' GROUP BY cited", [ctx.tenant_id])
    return {r["cited"]: {"helpful": r["helpful"], "unhelpful": r["unhelpful"]} for r in rows}


def repoint_paths(ctx: TenantContext, store: Store, old: str, new: str) -> int:
    """Sources under ``old`` moved to ``new``: the cited paths of the ratings follow (their counts with them)."""
    changed = 0
    with store.write() as db:
        for row in store.query("SELECT id, citations FROM answer_feedback WHERE tenant_id = ?", [ctx.tenant_id]):
            cited = json.loads(row["citations"])
            moved = [{**c, "path": new + c["path"][len(old):]}
                     if c.get("path") == old or str(c.get("path", "")).startswith(old + "/") else c for c in cited]
            if moved != cited:
                db.execute("UPDATE answer_feedback SET citations = ? WHERE tenant_id = ? AND id = ?",
                           [json.dumps(moved, ensure_ascii=False), ctx.tenant_id, row["id"]])
                changed += 1
    return changed


def purge_before(ctx: TenantContext, store: Store, cutoff: str) -> dict[str, int]:
    """Retention: the reasons and answers of ratings last changed before ``cutoff`` are wiped; the ratings stay."""
    with store.write() as db:
        wiped = db.execute(
            "UPDATE answer_feedback SET reason = NULL, answer = NULL WHERE tenant_id = ? AND updated_at < ? "
            "AND (reason IS NOT NULL OR answer IS NOT NULL)", [ctx.tenant_id, cutoff]).rowcount
    return {"feedback": wiped}


retention.register(__name__, purge_before)
