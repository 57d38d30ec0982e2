"""The gap backlog (G1-G5): what the agent could not answer, merged, masked, kept until written.

Every uncovered question arrives through :meth:`Backlog.record`. The question is PII-masked first
(:mod:`core.pii`; if masking fails nothing at all is stored), embedded, and merged into the nearest
gap of this tenant when it is the same question (:mod:`core.gap_matching`), else it opens a new gap.
A gap keeps its counter, first/last seen, languages and channels for ever; its masked samples are
deleted after the tenant's retention (default 30 days) by :meth:`Backlog.purge`, which also purges the
tenant's private logs after their own retention (default 90 days, :mod:`core.tenancy.retention`). The variant's
embedding stays so later variants still merge (computed from what the masked text asks, never the raw).

Lifecycle: open -> closed (an editor links the article that answers it) -> reopened, when a question
of the gap arrives uncovered after the closing: the article did not answer it. Every transition is a
row of history. Faults (a transport error, a failing tool) are never recorded: only true absences.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

import numpy as np

from core.base.store import Store
from core.gaps import model, pii
from core.gaps.adoption import Adoption
from core.gaps.labels import topic_label
from core.gaps.matching import GapTuning, StoredVariants, best_match, comparable, has_content, words
from core.gaps.model import Gap, GapError, gap_of_row, gaps_csv, require_editor, stamp
from core.gaps.purging import DEFAULT_RETENTION_DAYS, Purging  # noqa: F401  (DEFAULT_RETENTION_DAYS: re-exported)
from core.gaps.reshaping import Reshaping
from core.knowledge import sources as sources_mod
from core.knowledge.embeddings import Embedder
from core.tenancy import retention
from core.tenancy.context import TenantContext

log = logging.getLogger(__name__)

UNCOVERED_REASONS = ("not_covered", "withheld_unsupported", "partial")
FAULT_REASONS = ("transport_error", "tool_error", "truncated")
STATUSES = ("open", "closed", "reopened")
PURGE_EVERY_SECONDS = 3600


class Backlog(Reshaping, Purging, Adoption):
    """The backlog of one process: the store, the embedder that merges variants, a clock."""

    def __init__(self, store: Store, embedder: Embedder,
                 tuning: GapTuning = GapTuning(),  # noqa: B008 - frozen dataclass: one shared default is safe
                 clock: Callable[[], datetime] | None = None):
        self.store, self.embedder, self.tuning = store, embedder, tuning
        self.clock = clock or store.clock.now  # the runtime's one clock unless a test passes its own
        #: called as (ctx, merged gap id, target gap id) inside a merge's transaction
        self.on_merge: list[Callable[[TenantContext, int, int], None]] = []
        self._cache: dict[tuple[int, str], StoredVariants] = {}  # by (tenant, gap kind)
        self._lock = threading.RLock()
        self._purged_at: dict[int, float] = {}
        self._compact_pending = False  # a purge could not truncate the WAL: the next one tries again

    # -- recording ------------------------------------------------------------------------------
    def record(self, ctx: TenantContext, question: str, language: str, channel: str, conversation_id: str,
               reason: str = "not_covered") -> int | None:
        """Record an uncovered question; returns its gap id, or None when masking failed (nothing stored)."""
        recorded = self.record_variant(ctx, question, language, channel, conversation_id, reason)
        return recorded[0] if recorded else None

    def record_variant(self, ctx: TenantContext, question: str, language: str, channel: str, conversation_id: str,
                       reason: str = "not_covered") -> tuple[int, int] | None:
        """As :meth:`record`, (gap id, variant id); a variant joins only gaps of its kind (:mod:`core.gaps.model`)."""
        if reason in FAULT_REASONS:
            raise GapError(f"'{reason}' is a fault, not an absence of knowledge: faults never open gaps.")
        if reason not in (*UNCOVERED_REASONS, model.NOT_HELPFUL):
            raise GapError(f"Unknown gap reason {reason!r}; use one of {', '.join(UNCOVERED_REASONS)}.")
        kind = model.NOT_HELPFUL if reason == model.NOT_HELPFUL else model.UNCOVERED
        try:
            masked = pii.mask(question, language).text
        except pii.MaskingError as exc:
            log.error("An uncovered question was not recorded: %s", exc)  # the message holds no input text
            return None
        content = comparable(masked, language)  # what it asks: placeholders make unrelated questions alike
        vector = np.asarray(self.embedder.queries([content])[0], dtype=np.float32)
        vector /= max(float(np.linalg.norm(vector)), 1e-12)
        ws = words(content, language)
        now = stamp(self.clock)
        with self._lock, self.store.write() as db:
            variants = self._variants(ctx, kind)
            match = None
            if variants.matrix is not None and has_content(ws, masked):
                match = best_match(vector, ws, language, variants.matrix, variants.ids, variants.gap_ids,
                                   variants.words, variants.languages, self.tuning)
            if match is None:
                gap_id = db.execute(
                    "INSERT INTO gaps (tenant_id, label, status, count, first_seen, last_seen, languages, channels, "
                    "kind) VALUES (?, ?, 'open', 0, ?, ?, '[]', '[]', ?)",
                    [ctx.tenant_id, topic_label(masked, language), now, now, kind]).lastrowid
                self._history(ctx, gap_id, "opened", "agent", sample=masked, detail={"channel": channel})
            else:
                gap_id = match.gap_id
                gap = self.get(ctx, gap_id)
                if gap is not None and gap.status == "closed":
                    db.execute("UPDATE gaps SET status = 'reopened' WHERE tenant_id = ? AND id = ?",
                               [ctx.tenant_id, gap_id])
                    self._history(ctx, gap_id, "reopened", "agent", article=gap.article_path, sample=masked,
                                  detail={"similarity": round(match.similarity, 3), "channel": channel})
            self._count(ctx, gap_id, language, channel, now)
            variant_id = db.execute(
                "INSERT INTO gap_variants (tenant_id, gap_id, at, language, channel, conversation_id, reason, sample, "
                "words, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [ctx.tenant_id, gap_id, now, language, channel, conversation_id, reason, masked, json.dumps(ws),
                 vector.tobytes()]).lastrowid
            variants.append(variant_id, gap_id, vector, ws, language)
            variants.version = self._bump(ctx)
        if time.monotonic() - self._purged_at.get(ctx.tenant_id, float("-inf")) > PURGE_EVERY_SECONDS:
            self.purge(ctx)  # retention runs on its own in a long-lived process, hourly per tenant
        return gap_id, variant_id

    def _count(self, ctx: TenantContext, gap_id: int, language: str, channel: str, now: str) -> None:
        row = self.store.query("SELECT languages, channels FROM gaps WHERE tenant_id = ? AND id = ?",
                               [ctx.tenant_id, gap_id])[0]
        languages = sorted(set(json.loads(row["languages"])) | {language})
        channels = sorted(set(json.loads(row["channels"])) | {channel})
        self.store.db.execute(
            "UPDATE gaps SET count = count + 1, last_seen = max(last_seen, ?), languages = ?, channels = ? "
            "WHERE tenant_id = ? AND id = ?",
            [now, json.dumps(languages), json.dumps(channels), ctx.tenant_id, gap_id])

    def _variants(self, ctx: TenantContext, kind: str) -> StoredVariants:
        version = self._version(ctx)
        cached = self._cache.get((ctx.tenant_id, kind))
        if cached is not None and cached.version == version:
            return cached
        fresh = StoredVariants(version)
        vectors = []
        for row in self.store.db.execute(
                "SELECT id, gap_id, words, language, vector FROM gap_variants WHERE tenant_id = ? AND (reason = ?) = ? "
                "ORDER BY id", [ctx.tenant_id, model.NOT_HELPFUL, kind == model.NOT_HELPFUL]).fetchall():
            fresh.ids.append(row[0])
            fresh.gap_ids.append(row[1])
            fresh.words.append(json.loads(row[2]) if row[2] is not None else None)
            fresh.languages.append(row[3])
            vectors.append(np.frombuffer(row[4], dtype=np.float32))
        fresh.matrix = np.vstack(vectors) if vectors else None
        self._cache[(ctx.tenant_id, kind)] = fresh
        return fresh

    def _version(self, ctx: TenantContext) -> int:
        rows = self.store.db.execute("SELECT version FROM gap_state WHERE tenant_id = ?", [ctx.tenant_id]).fetchall()
        return rows[0][0] if rows else 0

    def _bump(self, ctx: TenantContext) -> int:
        self.store.db.execute(
            "INSERT INTO gap_state (tenant_id, version) VALUES (?, 1) "
            "ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1", [ctx.tenant_id])
        return self._version(ctx)

    def _history(self, ctx: TenantContext, gap_id: int, event: str, actor: str, article: str | None = None,
                 sample: str | None = None, detail: dict | None = None) -> None:
        self.store.db.execute(
            "INSERT INTO gap_history (tenant_id, gap_id, at, event, actor, article_path, sample, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [ctx.tenant_id, gap_id, stamp(self.clock), event, actor, article, sample,
             json.dumps(detail or {}, ensure_ascii=False)])

    # -- the rows behind merge and split (core.gaps.reshaping decides; inside its transaction) ---------
    def _fold_rows(self, ctx: TenantContext, from_id: int, into_id: int) -> None:
        """Move a gap's variants and history to another gap, then delete the emptied gap."""
        self.store.db.execute("UPDATE gap_variants SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",
                              [into_id, ctx.tenant_id, from_id])
        self.store.db.execute("UPDATE gap_history SET gap_id = ? WHERE tenant_id = ? AND gap_id = ?",
                              [into_id, ctx.tenant_id, from_id])
        self.store.db.execute("DELETE FROM gaps WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, from_id])

    def _insert_gap(self, ctx: TenantContext, label: str, count: int, first: str, last: str, languages: list[str],
                    channels: list[str], kind: str = model.UNCOVERED) -> int:
        return self.store.db.execute(
            "INSERT INTO gaps (tenant_id, label, status, count, first_seen, last_seen, languages, channels, kind) "
            "VALUES (?, ?, 'open', ?, ?, ?, ?, ?, ?)",
            [ctx.tenant_id, label, count, first, last, json.dumps(languages), json.dumps(channels), kind]).lastrowid

    def _move_variants(self, ctx: TenantContext, variant_ids: list[int], gap_id: int) -> None:
        self.store.db.execute(
            f"UPDATE gap_variants SET gap_id = ? WHERE tenant_id = ? AND id IN ({','.join('?' * len(variant_ids))})",
            [gap_id, ctx.tenant_id, *variant_ids])

    def _variant_stamps(self, ctx: TenantContext, gap_id: int) -> list[dict]:
        return self.store.query("SELECT at, language, channel FROM gap_variants WHERE tenant_id = ? AND gap_id = ?",
                                [ctx.tenant_id, gap_id])

    def _set_counts(self, ctx: TenantContext, gap_id: int, count: int, first: str, last: str, languages: list[str],
                    channels: list[str]) -> None:
        self.store.db.execute("UPDATE gaps SET count = ?, first_seen = ?, last_seen = ?, languages = ?, channels = ? "
                              "WHERE tenant_id = ? AND id = ?",
                              [count, first, last, json.dumps(languages), json.dumps(channels), ctx.tenant_id, gap_id])

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

    # -- reading ----------------------------------------------------------------------------------
    def gaps(self, ctx: TenantContext, status: str | None = None, language: str | None = None,
             channel: str | None = None, order: str = "count", kind: str | None = None) -> list[Gap]:
        """This tenant's gaps, most asked first (or most recent with order='recent'); ``kind``: of one kind only."""
        if status is not None and status not in STATUSES:
            raise GapError(f"Unknown status {status!r}; use one of {', '.join(STATUSES)}.")
        if kind is not None and kind not in model.KINDS:
            raise GapError(f"Unknown gap kind {kind!r}; use one of {', '.join(model.KINDS)}.")
        sql = "SELECT * FROM gaps WHERE tenant_id = ?"
        params: list = [ctx.tenant_id]
        if status:
            sql += " AND status = ?"
            params.append(status)
        sort = "last_seen DESC, id DESC" if order == "recent" else "count DESC, last_seen DESC, id DESC"
        gaps = [gap_of_row(row) for row in self.store.query(f"{sql} ORDER BY {sort}", params)]
        return [g for g in gaps if (language is None or language in g.languages)
                and (channel is None or channel in g.channels) and (kind is None or g.kind == kind)]

    def get(self, ctx: TenantContext, gap_id: int) -> Gap | None:
        rows = self.store.query("SELECT * FROM gaps WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, int(gap_id)])
        return gap_of_row(rows[0]) if rows else None

    def require(self, ctx: TenantContext, gap_id: int) -> Gap:
        gap = self.get(ctx, gap_id)
        if gap is None:
            raise GapError(f"No gap {gap_id} in this tenant. List gaps with `python -m core gaps {ctx.tenant_slug}`.")
        return gap

    def samples(self, ctx: TenantContext, gap_id: int) -> list[dict]:
        """The gap's variants, newest first; ``sample`` is None once retention purged it."""
        return self.store.query(
            "SELECT id, at, language, channel, conversation_id, reason, sample FROM gap_variants "
            "WHERE tenant_id = ? AND gap_id = ? ORDER BY id DESC", [ctx.tenant_id, int(gap_id)])

    def history(self, ctx: TenantContext, gap_id: int) -> list[dict]:
        rows = self.store.query(
            "SELECT at, event, actor, article_path, sample, detail FROM gap_history WHERE tenant_id = ? AND gap_id = ? "
            "ORDER BY id", [ctx.tenant_id, int(gap_id)])
        for row in rows:
            row["detail"] = json.loads(row["detail"])
        return rows

    def trend(self, ctx: TenantContext, days: int = 30) -> list[dict]:
        """Uncovered questions per day and language over the last ``days`` (counts survive purges); the answers
        marked unhelpful were answered, so they are not counted here."""
        since = (self.clock() - timedelta(days=days)).astimezone(timezone.utc).isoformat(timespec="seconds")
        return self.store.query(
            "SELECT substr(at, 1, 10) AS day, language, channel, COUNT(*) AS questions FROM gap_variants WHERE "
            "tenant_id = ? AND at >= ? AND reason != ? GROUP BY day, language, channel ORDER BY day",
            [ctx.tenant_id, since, model.NOT_HELPFUL])

    def export_csv(self, ctx: TenantContext) -> str:
        latest = {gap.id: next((s["sample"] for s in self.samples(ctx, gap.id) if s["sample"]), "")
                  for gap in self.gaps(ctx)}
        return gaps_csv(self.gaps(ctx), latest)

    # -- editorial actions ---------------------------------------------------------------------------
    def close(self, ctx: TenantContext, gap_id: int, article_path: str, replay: list[dict] | None = None) -> Gap:
        """Close the gap with the article that now answers it (an existing source of this tenant)."""
        require_editor(ctx)
        gap = self.require(ctx, gap_id)
        path = sources_mod.normalize_path(article_path)
        if sources_mod.get(ctx, self.store, path) is None:
            raise GapError(f"No source '{path}' in this tenant: "
                           "publish the article first, then close the gap with its path.")
        if gap.status == "closed":
            raise GapError(f"Gap {gap.id} is already closed with '{gap.article_path}'.")
        now = stamp(self.clock)
        detail = {}
        if replay is not None:
            detail = {"replayed": len(replay), "answered": sum(1 for r in replay if r.get("answered"))}
        if replay and gap.kind == model.NOT_HELPFUL:  # the answer marked unhelpful must be gone, not only "answered"
            detail["changed"] = sum(1 for r in replay if r.get("changed"))
            if not detail["changed"]:
                raise GapError(model.UNCHANGED.format(gap=gap.id))
        with self._lock, self.store.write() as db:
            db.execute("UPDATE gaps SET status = 'closed', article_path = ?, closed_at = ?, closed_by = ? "
                       "WHERE tenant_id = ? AND id = ?", [path, now, ctx.actor, ctx.tenant_id, gap.id])
            self._history(ctx, gap.id, "closed", ctx.actor, article=path, detail=detail)
            self._bump(ctx)
        return self.require(ctx, gap.id)

    def variant_gap(self, ctx: TenantContext, variant_id: int) -> int | None:
        """The gap a variant belongs to now (merges and splits move variants), None when it is gone."""
        rows = self.store.query("SELECT gap_id FROM gap_variants WHERE tenant_id = ? AND id = ?",
                                [ctx.tenant_id, int(variant_id)])
        return rows[0]["gap_id"] if rows else None

    def withdraw(self, ctx: TenantContext, variant_id: int) -> None:
        """Take one variant back (its 👎 became a 👍): the count follows; a gap it alone opened goes with it."""
        gap = self.get(ctx, self.variant_gap(ctx, variant_id) or 0)
        if gap is None:
            return
        with self._lock, self.store.write() as db:
            db.execute("DELETE FROM gap_variants WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, int(variant_id)])
            if gap.count <= 1 and gap.article_path is None:  # its variants and history go with it (foreign keys)
                db.execute("DELETE FROM gaps WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, gap.id])
            else:
                db.execute("UPDATE gaps SET count = max(count - 1, 0) WHERE tenant_id = ? AND id = ?",
                           [ctx.tenant_id, gap.id])
                self._history(ctx, gap.id, "withdrawn", "feedback", detail={"variant": int(variant_id)})
            self._bump(ctx)

    def reopen(self, ctx: TenantContext, gap_id: int) -> Gap:
        """Reopen by hand (an editor changed their mind); automatic reopening happens in ``record``."""
        require_editor(ctx)
        gap = self.require(ctx, gap_id)
        if gap.status != "closed":
            raise GapError(f"Gap {gap.id} is {gap.status}, not closed.")
        with self._lock, self.store.write() as db:
            db.execute("UPDATE gaps SET status = 'reopened' WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, gap.id])
            self._history(ctx, gap.id, "reopened", ctx.actor, article=gap.article_path)
            self._bump(ctx)
        return self.require(ctx, gap.id)

    def draft(self, ctx: TenantContext, gap_id: int) -> dict | None:
        """The article being written for this gap (path, title, content), if an editor saved one."""
        rows = self.store.query("SELECT draft_path, draft_title, draft_content FROM gaps "
                                "WHERE tenant_id = ? AND id = ?",
                                [ctx.tenant_id, int(gap_id)])
        if not rows or rows[0]["draft_content"] is None:
            return None
        return {"path": rows[0]["draft_path"], "title": rows[0]["draft_title"], "content": rows[0]["draft_content"]}

    def save_draft(self, ctx: TenantContext, gap_id: int, path: str, title: str, content: str) -> dict:
        """Keep the article being written with its gap (not in the knowledge tree until published)."""
        require_editor(ctx)
        gap = self.require(ctx, gap_id)
        with self.store.write() as db:
            db.execute("UPDATE gaps SET draft_path = ?, draft_title = ?, draft_content = ? "
                       "WHERE tenant_id = ? AND id = ?",
                       [path, title, content, ctx.tenant_id, gap.id])
        return {"path": path, "title": title, "content": content}

    def rename(self, ctx: TenantContext, gap_id: int, label: str) -> Gap:
        require_editor(ctx)
        label = " ".join((label or "").split())
        if not label:
            raise GapError("A gap label cannot be empty; write a few words that name the question.")
        gap = self.require(ctx, gap_id)
        with self.store.write() as db:
            db.execute("UPDATE gaps SET label = ? WHERE tenant_id = ? AND id = ?", [label[:200], ctx.tenant_id, gap.id])
            self._history(ctx, gap.id, "renamed", ctx.actor, detail={"from": gap.label})
        return self.require(ctx, gap.id)

    def repoint_articles(self, ctx: TenantContext, old: str, new: str) -> int:
        """The articles under ``old`` moved to ``new``: gaps closed with them follow (no history row: same article)."""
        with self.store.write() as db:
            return db.execute(
                "UPDATE gaps SET article_path = ? || substr(article_path, ?) WHERE tenant_id = ? AND "
                "(article_path = ? OR (article_path >= ? AND article_path < ?))",
                [new, len(old) + 1, ctx.tenant_id, old, old + "/", old + "0"]).rowcount

    def _purge_samples(self, ctx: TenantContext) -> int:
        cutoff = retention.cutoff(self.clock(), self.retention_days(ctx))
        with self._lock, self.store.write() as db:
            purged = db.execute(
                "UPDATE gap_variants SET sample = NULL, words = NULL "
                "WHERE tenant_id = ? AND at < ? AND sample IS NOT NULL",
                [ctx.tenant_id, cutoff]).rowcount
            db.execute("UPDATE gap_history SET sample = NULL WHERE tenant_id = ? AND at < ? AND sample IS NOT NULL",
                       [ctx.tenant_id, cutoff])
            if purged:
                self._bump(ctx)
        return purged


def gaps_with_article_at(ctx: TenantContext, store: Store, base: str) -> list[dict]:
    """Gaps whose article is ``base`` or below it (closed first, then most asked): what an edit there touches."""
    return store.query(
        "SELECT id, label, status, article_path, closed_at, count FROM gaps WHERE tenant_id = ? "
        "AND article_path IS NOT NULL AND (article_path = ? OR (article_path >= ? AND article_path < ?)) "
        "ORDER BY status = 'closed' DESC, count DESC, id",
        [ctx.tenant_id, base, base + "/", base + "0"],
    )
