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
from core.gaps import pii
from core.gaps.matching import GapTuning, StoredVariants, best_match, comparable, has_content, words
from core.gaps.model import Gap, GapError, gap_of_row, gaps_csv, require_editor, stamp, topic_label
from core.gaps.reshaping import Reshaping
from core.knowledge import sources as sources_mod
from core.knowledge.embeddings import Embedder
from core.tenancy import retention, tenants
from core.tenancy.context import AuthError, TenantContext, local_operator
from core.tenancy.tenants import list_tenants

log = logging.getLogger(__name__)

UNCOVERED_REASONS = ("not_covered", "withheld_unsupported", "partial")
FAULT_REASONS = ("transport_error", "tool_error", "truncated")
STATUSES = ("open", "closed", "reopened")
DEFAULT_RETENTION_DAYS = 30
PURGE_EVERY_SECONDS = 3600


class Backlog(Reshaping):
    """The backlog of one process: the store, the embedder that merges variants, a clock."""

    def __init__(self, store: Store, embedder: Embedder,
                 tuning: GapTuning = GapTuning(),  # noqa: B008 - frozen dataclass: one shared default is safe
                 clock: Callable[[], datetime] | None = None):
        self.store, self.embedder, self.tuning = store, embedder, tuning
        self.clock = clock or store.clock.now  # the runtime's one clock unless a test passes its own
        #: called as (ctx, merged gap id, target gap id) inside a merge's transaction
        self.on_merge: list[Callable[[TenantContext, int, int], None]] = []
        self._cache: dict[int, StoredVariants] = {}
        self._lock = threading.RLock()
        self._purged_at: dict[int, float] = {}
        self._compact_pending = False  # a purge could not truncate the WAL: the next one tries again

    # -- recording ------------------------------------------------------------------------------
    def record(self, ctx: TenantContext, question: str, language: str, channel: str, conversation_id: str,
               reason: str = "not_covered") -> int | None:
        """Record an uncovered question; returns its gap id, or None when masking failed (nothing stored)."""
        if reason in FAULT_REASONS:
            raise GapError(f"'{reason}' is a fault, not an absence of knowledge: faults never open gaps.")
        if reason not in UNCOVERED_REASONS:
            raise GapError(f"Unknown gap reason {reason!r}; use one of {', '.join(UNCOVERED_REASONS)}.")
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
            variants = self._variants(ctx)
            match = None
            if variants.matrix is not None and has_content(ws, masked):
                match = best_match(vector, ws, language, variants.matrix, variants.ids, variants.gap_ids,
                                   variants.words, variants.languages, self.tuning)
            if match is None:
                gap_id = db.execute(
                    "INSERT INTO gaps (tenant_id, label, status, count, first_seen, last_seen, languages, channels) "
                    "VALUES (?, ?, 'open', 0, ?, ?, '[]', '[]')",
                    [ctx.tenant_id, topic_label(masked, language), now, now]).lastrowid
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
        return gap_id

    def _count(self, ctx: TenantContext, gap_id: int, language: str, channel: str, now: str) -> None:
        row = self.store.query("SELECT languages, channels FROM gaps WHERE tenant_id = ? AND id = ?",
                               [ctx.tenant_id, gap_id])[0]
        languages = sorted(set(json.loads(row["languages"])) | {language})
        channels = sorted(set(json.loads(row["channels"])) | {channel})
        self.store.db.execute(
            "UPDATE gaps SET count = count + 1, last_seen = max(last_seen, ?), languages = ?, channels = ? "
            "WHERE tenant_id = ? AND id = ?",
            [now, json.dumps(languages), json.dumps(channels), ctx.tenant_id, gap_id])

    def _variants(self, ctx: TenantContext) -> StoredVariants:
        version = self._version(ctx)
        cached = self._cache.get(ctx.tenant_id)
        if cached is not None and cached.version == version:
            return cached
        fresh = StoredVariants(version)
        vectors = []
        for row in self.store.db.execute(
                "SELECT id, gap_id, words, language, vector FROM gap_variants WHERE tenant_id = ? ORDER BY id",
                [ctx.tenant_id]).fetchall():
            fresh.ids.append(row[0])
            fresh.gap_ids.append(row[1])
            fresh.words.append(json.loads(row[2]) if row[2] is not None else None)
            fresh.languages.append(row[3])
            vectors.append(np.frombuffer(row[4], dtype=np.float32))
        fresh.matrix = np.vstack(vectors) if vectors else None
        self._cache[ctx.tenant_id] = fresh
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
                    channels: list[str]) -> int:
        return self.store.db.execute(
            "INSERT INTO gaps (tenant_id, label, status, count, first_seen, last_seen, languages, channels) "
            "VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
            [ctx.tenant_id, label, count, first, last, json.dumps(languages), json.dumps(channels)]).lastrowid

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
             channel: str | None = None, order: str = "count") -> list[Gap]:
        """This tenant's gaps, most asked first (or most recent with order='recent')."""
        if status is not None and status not in STATUSES:
            raise GapError(f"Unknown status {status!r}; use one of {', '.join(STATUSES)}.")
        sql = "SELECT * FROM gaps WHERE tenant_id = ?"
        params: list = [ctx.tenant_id]
        if status:
            sql += " AND status = ?"
            params.append(status)
        sort = "last_seen DESC, id DESC" if order == "recent" else "count DESC, last_seen DESC, id DESC"
        gaps = [gap_of_row(row) for row in self.store.query(f"{sql} ORDER BY {sort}", params)]
        return [g for g in gaps
                if (language is None or language in g.languages) and (channel is None or channel in g.channels)]

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
        """Uncovered questions per day and language over the last ``days`` (counts survive purges)."""
        since = (self.clock() - timedelta(days=days)).astimezone(timezone.utc).isoformat(timespec="seconds")
        return self.store.query(
            "SELECT substr(at, 1, 10) AS day, language, channel, COUNT(*) AS questions FROM gap_variants "
            "WHERE tenant_id = ? AND at >= ? GROUP BY day, language, channel ORDER BY day", [ctx.tenant_id, since])

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
        with self._lock, self.store.write() as db:
            db.execute("UPDATE gaps SET status = 'closed', article_path = ?, closed_at = ?, closed_by = ? "
                       "WHERE tenant_id = ? AND id = ?", [path, now, ctx.actor, ctx.tenant_id, gap.id])
            self._history(ctx, gap.id, "closed", ctx.actor, article=path, detail=detail)
            self._bump(ctx)
        return self.require(ctx, gap.id)

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

    # -- retention ------------------------------------------------------------------------------------
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

    def purge_all(self) -> dict[str, dict[str, int]]:
        """Purge every tenant, then compact once (the app calls this on start and on a schedule; ``python -m
        core purge``): {slug: {what: rows purged}}."""
        out = {t["slug"]: self.purge_tenant(local_operator(self.store, t["slug"], "retention"), compact=False)
               for t in sorted(list_tenants(self.store), key=lambda t: t["id"])}
        self._compact_pending = not retention.compact(self.store)
        return out

    def adopt_raw_events(self) -> int:
        """Move rows of the pre-backlog ``gap_events`` table (raw questions) into the backlog, masked.

        Each row is recorded as a variant at its original time and then deleted, so raw text leaves the
        disk; a row whose masking fails is deleted too (fail closed: nothing unmasked is kept)."""
        moved = 0
        tenant_ids = [r["tenant_id"] for r in self.store.query("SELECT DISTINCT tenant_id FROM gap_events")]
        slugs = {t["id"]: t["slug"] for t in list_tenants(self.store)} if tenant_ids else {}
        for slug in (slugs[i] for i in tenant_ids if i in slugs):
            ctx = local_operator(self.store, slug, "migration")
            for row in self.store.query("SELECT * FROM gap_events WHERE tenant_id = ? ORDER BY id", [ctx.tenant_id]):
                at = datetime.fromisoformat(row["at"])
                then = Backlog(self.store, self.embedder, self.tuning, clock=lambda at=at: at)  # recorded as of then
                reason = row["reason"] if row["reason"] in UNCOVERED_REASONS else "not_covered"
                if then.record(ctx, row["question"], row["language"], row["channel"], row["conversation_id"], reason):
                    moved += 1
                with self.store.write() as db:
                    db.execute("DELETE FROM gap_events WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, row["id"]])
        return moved


def gaps_with_article_at(ctx: TenantContext, store: Store, base: str) -> list[dict]:
    """Gaps whose article is ``base`` or below it (closed first, then most asked): what an edit there touches."""
    return store.query(
        "SELECT id, label, status, article_path, closed_at, count FROM gaps WHERE tenant_id = ? "
        "AND article_path IS NOT NULL AND (article_path = ? OR (article_path >= ? AND article_path < ?)) "
        "ORDER BY status = 'closed' DESC, count DESC, id",
        [ctx.tenant_id, base, base + "/", base + "0"],
    )
