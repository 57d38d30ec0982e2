"""Training (K3): chunk, embed and index what changed since the last training, per tenant.

Training is incremental by content hash, resumable and interruptible: sources are trained in small
batches; each batch replaces the source's chunks in chromadb and whoosh (delete-then-add, idempotent)
and only then marks the sources trained. A crash or a stop between those steps leaves the sources
marked "changed", so the next training simply redoes them.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from core.base.config import Settings
from core.base.errors import UserError
from core.base.locks import FileLock, LockBusy
from core.base.store import Store
from core.base.text import sentences
from core.knowledge import sources as sources_mod
from core.knowledge.chunking import chunk_qa, chunk_text
from core.knowledge.embeddings import Embedder
from core.knowledge.keyword_index import KeywordDoc, KeywordIndex
from core.knowledge.sources import Source
from core.knowledge.training_progress import EMBED_BATCH, Tracker, TrainingCallback, embed_groups
from core.knowledge.units import units as text_units
from core.knowledge.variants import Variants
from core.knowledge.vector_index import VectorIndex
from core.tenancy.context import TenantContext

Progress = TrainingCallback  # called with a TrainingProgress after every embedding batch


class TrainingBusy(UserError):
    """Another process (or thread) is training the same tenant."""

    def __init__(self, slug: str, holder: dict | None):
        where = f" (process {holder['pid']}, since {holder['since']})" if holder else ""
        super().__init__(f"A training of '{slug}' is already running{where}. It trains the sources changed before "
                         "it started; train again when it is done to include later changes.")
        self.holder = holder


@dataclass(frozen=True)
class Chunk:
    """One trained piece of a source, as stored and cited."""

    id: str
    source_id: int
    ordinal: int
    start: int
    end: int
    text: str
    trained_at: str


@dataclass
class TrainReport:
    trained: list[str] = field(default_factory=list)
    removed_sources: int = 0
    chunks: int = 0
    embedded: int = 0
    pending: int = 0
    interrupted: bool = False
    variant_groups: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "trained_sources": len(self.trained), "removed_sources": self.removed_sources, "chunks": self.chunks,
            "embedded": self.embedded, "pending": self.pending, "interrupted": self.interrupted,
            "variant_groups": self.variant_groups, "seconds": round(self.seconds, 2),
        }


def chunk_id(source_id: int, ordinal: int, text: str) -> str:
    """Stable for the same text at the same place; a new id when the text changes."""
    return hashlib.sha1(f"{source_id}:{ordinal}:{text}".encode()).hexdigest()[:12]


def trained_chunks(ctx: TenantContext, store: Store, source_ids: list[int]) -> list[dict]:
    """``{id, source_id, ordinal}`` of the sources' trained chunks, by source and position."""
    if not source_ids:
        return []
    return store.query(
        "SELECT c.id, c.source_id, c.ordinal FROM chunks c WHERE c.tenant_id = ? "
        "AND c.source_id IN (SELECT value FROM json_each(?)) ORDER BY c.source_id, c.ordinal",
        [ctx.tenant_id, json.dumps(source_ids)],
    )


def chunk_source(source: Source) -> list[tuple[int, int, str]]:
    """(start, end, text) of a source's chunks: Q&A pairs whole, other text by the chunker."""
    spans = chunk_qa(source.title, source.content) if source.type == "qa" else chunk_text(source.content)
    return [(s.start, s.end, s.text) for s in spans]


def source_units(source: Source) -> list[dict]:
    """The units the chunker read in a source (K2 preview): kind, boundaries, an FAQ entry's question."""
    if source.type == "qa":
        text = f"{source.title.strip()}\n{source.content.strip()}"
        return [{"kind": "qa", "start": 0, "end": len(text), "question": source.title.strip()}]
    return [{"kind": u.kind, "start": u.start, "end": u.end, "question": u.question}
            for u in text_units(source.content)]


def indexed_text(source: Source, text: str) -> str:
    """What is embedded and keyword-indexed for a chunk: its source's title, then the chunk."""
    return text if source.type == "qa" else f"{source.title}\n{text}"


def sentence_texts(title: str, source_type: str, text: str) -> list[str]:
    """What is embedded per sentence of a chunk (title, then the sentence), for sentence-level ranking: a
    question usually asks about one sentence of a paragraph. None for a Q&A pair or a one-sentence chunk,
    whose chunk vector already is that sentence's."""
    if source_type == "qa":
        return []
    parts = sentences(text)
    return [f"{title}\n{part}" for part in parts] if len(parts) > 1 else []


@dataclass(frozen=True)
class PlannedChunk:
    """A chunk as a training embeds it: its place and text, then the texts embedded for it (its indexed text,
    then one per sentence)."""

    start: int
    end: int
    text: str
    texts: tuple[str, ...]


def plan_source(source: Source) -> list[PlannedChunk]:
    """What training a source embeds, chunk by chunk (known before embedding, so progress has a total)."""
    return [PlannedChunk(start, end, text, (indexed_text(source, text),
                                            *sentence_texts(source.title, source.type, text)))
            for start, end, text in chunk_source(source)]


def pack(vectors: np.ndarray) -> bytes:
    return np.asarray(vectors, dtype=np.float16).tobytes()


def unpack(blob: bytes, dim: int) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float16).reshape(-1, dim).astype(np.float32)


class Index:
    """Both indexes of every tenant, plus the chunk table that ties them to sources."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: Embedder,
        batch_sources: int = 64,
        vectors: VectorIndex | None = None,
        keywords: KeywordIndex | None = None,
        embed_batch: int = EMBED_BATCH,
    ):
        self.settings, self.store, self.embedder = settings, store, embedder
        self.vectors = vectors or VectorIndex(settings, embedder)
        self.keywords = keywords or KeywordIndex(settings.whoosh_dir)
        self.variants = Variants(store, embedder)
        self.batch_sources, self.embed_batch = batch_sources, embed_batch

    # -- training -------------------------------------------------------------------------------
    def train(
        self,
        ctx: TenantContext,
        progress: Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
        full: bool = False,
        wait: float = 0.0,
    ) -> TrainReport:
        """Index what changed (everything with ``full``, e.g. after changing the embedder); drop what
        was deleted. Safe to interrupt and to run again. One training per tenant at a time, across processes:
        a second one waits up to ``wait`` seconds, then raises :class:`TrainingBusy`. ``progress`` gets a
        :class:`~core.knowledge.training_progress.TrainingProgress` at the start, after every embedding batch
        (a few chunks), when finishing and when done."""
        lock = FileLock(self.settings.data_dir / "locks" / f"training-{int(ctx.tenant_id)}.lock")
        try:
            with lock.exclusive(wait, what=f"training {ctx.tenant_slug}"):
                return self._train(ctx, progress, should_stop, full)
        except LockBusy as busy:
            raise TrainingBusy(ctx.tenant_slug, busy.holder) from None

    def _train(self, ctx: TenantContext, progress: Progress | None, should_stop: Callable[[], bool] | None,
               full: bool) -> TrainReport:
        started = time.monotonic()
        report = TrainReport()
        all_sources = sources_mod.list_sources(ctx, self.store)
        live = {s.id for s in all_sources}
        indexed = {r["source_id"] for r in self.store.query("SELECT DISTINCT source_id FROM chunks WHERE tenant_id = ?",
                                                            [ctx.tenant_id])}
        orphans = sorted(indexed - live)
        if orphans:
            self.forget(ctx, orphans)
            report.removed_sources = len(orphans)
        if full:  # everything again, in place: a search meanwhile finds each source's old chunks or its new ones
            if self.vectors.embedded_by_another(ctx.tenant_id):  # whose vectors may not even share the dimension
                self.vectors.drop(ctx.tenant_id)
            sources_mod.mark_untrained(ctx, self.store)
            all_sources = sources_mod.list_sources(ctx, self.store)
        changed = [s for s in all_sources if s.changed]
        total = len(changed)
        plans = [plan_source(s) for s in changed]
        tracker = Tracker(progress, self.store.clock,
                          [(s.path, [sum(map(len, c.texts)) for c in plan]) for s, plan in zip(changed, plans)])
        tracker.report()
        misses_before = getattr(self.embedder, "misses", 0)
        done = 0
        for i in range(0, total, self.batch_sources):
            if should_stop and should_stop():
                report.interrupted = True
                break
            batch = changed[i : i + self.batch_sources]
            report.chunks += self._train_batch(ctx, batch, plans[i : i + self.batch_sources], tracker)
            plans[i : i + self.batch_sources] = [[] for _ in batch]  # trained: their texts are not needed again
            report.trained += [s.path for s in batch]
            done += len(batch)
        tracker.report("finishing")
        if done:
            self.keywords.optimize(ctx.tenant_id)
        if not report.interrupted:
            self._fill_sentence_vectors(ctx, should_stop)
        report.pending = total - done
        if full and not report.pending:  # and nothing else: what no chunk row names is left over from a crash
            kept = {r["id"] for r in self.store.query("SELECT id FROM chunks WHERE tenant_id = ?", [ctx.tenant_id])}
            self.vectors.keep_only(ctx.tenant_id, kept)
            self.keywords.keep_only(ctx.tenant_id, kept)
        if not report.pending:  # the Q&A pairs as trained now: refit the variant model if they changed
            report.variant_groups = self.variants.refresh(
                ctx, sources_mod.list_sources(ctx, self.store))["variant_groups"]
        report.embedded = getattr(self.embedder, "misses", 0) - misses_before
        report.seconds = time.monotonic() - started
        tracker.report("done")
        return report

    def _train_batch(self, ctx: TenantContext, batch: list[Source], plans: list[list[PlannedChunk]] | None = None,
                     tracker: Tracker | None = None) -> int:
        now = self.store.clock.stamp()
        plans = plans if plans is not None else [plan_source(s) for s in batch]
        tracker = tracker or Tracker(None, self.store.clock, [])
        rows, docs, ids, metas, groups = [], [], [], [], []
        for source, plan in zip(batch, plans):
            for ordinal, chunk in enumerate(plan):
                cid = chunk_id(source.id, ordinal, chunk.text)
                rows.append([ctx.tenant_id, cid, source.id, ordinal, chunk.start, chunk.end, chunk.text, now])
                docs.append(KeywordDoc(cid, source.id, source.language, source.path, chunk.texts[0]))
                ids.append(cid)
                metas.append({"source_id": source.id, "ordinal": ordinal})
                groups.append(chunk.texts)
        # a chunk with its sentences, a few chunks per call, so progress is reported while the batch is embedded
        embedded = embed_groups(self.embedder.passages, groups, tracker, self.embed_batch)
        vectors = np.vstack([e[:1] for e in embedded]) if embedded else self.embedder.passages([])
        for row, group in zip(rows, embedded):
            row.append(pack(group[1:]))
        source_ids = [s.id for s in batch]
        self.vectors.replace(ctx.tenant_id, source_ids, ids, vectors, metas)
        self.keywords.replace(ctx.tenant_id, source_ids, docs)
        with self.store.write() as db:
            marks = ",".join("?" * len(source_ids))
            db.execute(f"DELETE FROM chunks WHERE tenant_id = ? AND source_id IN ({marks})",
                       [ctx.tenant_id, *source_ids])
            db.conn.executemany(
                "INSERT INTO chunks (tenant_id, id, source_id, ordinal, start, end, text, trained_at, "
                "sentence_vectors) VALUES (?,?,?,?,?,?,?,?,?)",
                rows,
            )
            sources_mod.mark_trained(ctx, self.store, batch, now)  # only the unedited: an edit stays "changed"
        return len(rows)

    def _fill_sentence_vectors(self, ctx: TenantContext, should_stop: Callable[[], bool] | None) -> None:
        """Chunks trained before sentence vectors existed get them (once; in batches, interruptible).

        Chunks whose source is gone are skipped: each batch's sources are looked up, and the ids found missing
        are left out of the next batches (so every pass fills a chunk or rules out a source, and the loop ends)."""
        gone: set[int] = set()
        while not (should_stop and should_stop()):
            rows = self.store.query(
                "SELECT id, source_id, text FROM chunks WHERE tenant_id = ? AND sentence_vectors IS NULL "
                "AND source_id NOT IN (SELECT value FROM json_each(?)) LIMIT 256",
                [ctx.tenant_id, json.dumps(sorted(gone))])
            if not rows:
                return
            found = sources_mod.get_by_ids(ctx, self.store, sorted({r["source_id"] for r in rows}), with_content=False)
            gone.update(r["source_id"] for r in rows if r["source_id"] not in found)
            rows = [r for r in rows if r["source_id"] in found]
            if not rows:
                continue
            groups = [sentence_texts(found[r["source_id"]].title, found[r["source_id"]].type, r["text"]) for r in rows]
            vectors = self.embedder.passages([t for g in groups for t in g])
            at, updates = 0, []
            for row, group in zip(rows, groups):
                updates.append((pack(vectors[at: at + len(group)]), ctx.tenant_id, row["id"]))
                at += len(group)
            with self.store.write() as db:
                db.conn.executemany("UPDATE chunks SET sentence_vectors = ? WHERE tenant_id = ? AND id = ?", updates)

    def sentence_similarities(self, ctx: TenantContext, vector: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        """For each chunk that has sentence vectors: its best sentence's cosine similarity to the query vector."""
        return {cid: max(scores) for cid, scores in self.sentence_scores(ctx, vector, chunk_ids).items()}

    def sentence_scores(self, ctx: TenantContext, vector: np.ndarray,
                        chunk_ids: list[str]) -> dict[str, tuple[float, ...]]:
        """For each chunk that has sentence vectors: each sentence's cosine similarity to the query vector, in
        the order of ``core.base.text.sentences(chunk text)``."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self.store.query(
            f"SELECT id, sentence_vectors FROM chunks WHERE tenant_id = ? AND id IN ({marks}) "
            "AND length(sentence_vectors) > 0",
            [ctx.tenant_id, *chunk_ids],
        )
        query = np.asarray(vector, dtype=np.float32)
        return {r["id"]: tuple(float(x) for x in unpack(r["sentence_vectors"], query.shape[0]) @ query) for r in rows}

    def forget(self, ctx: TenantContext, source_ids: list[int]) -> None:
        """Remove sources' chunks from both indexes and the chunk table."""
        if not source_ids:
            return
        self.vectors.replace(ctx.tenant_id, source_ids, [], self.embedder.passages([]), [])
        self.keywords.replace(ctx.tenant_id, source_ids, [])
        with self.store.write() as db:
            marks = ",".join("?" * len(source_ids))
            db.execute(f"DELETE FROM chunks WHERE tenant_id = ? AND source_id IN ({marks})",
                       [ctx.tenant_id, *source_ids])

    # -- reading chunks ---------------------------------------------------------------------------
    def chunks(self, ctx: TenantContext, chunk_ids: list[str]) -> dict[str, Chunk]:
        """Trained chunks of this tenant by id (foreign or unknown ids are absent)."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self.store.query(
            "SELECT id, source_id, ordinal, start, end, text, trained_at FROM chunks "
            f"WHERE tenant_id = ? AND id IN ({marks})",
            [ctx.tenant_id, *chunk_ids],
        )
        return {r["id"]: Chunk(**r) for r in rows}

    def chunks_of(self, ctx: TenantContext, source_id: int) -> list[Chunk]:
        """A source's trained chunks in order."""
        rows = self.store.query(
            "SELECT id, source_id, ordinal, start, end, text, trained_at FROM chunks "
            "WHERE tenant_id = ? AND source_id = ? ORDER BY ordinal",
            [ctx.tenant_id, source_id],
        )
        return [Chunk(**r) for r in rows]

    def status(self, ctx: TenantContext) -> dict:
        """Counts for a tenant: sources, changed, chunks in each store."""
        srcs = sources_mod.list_sources(ctx, self.store)
        return {
            "sources": len(srcs),
            "changed": sum(1 for s in srcs if s.changed),
            "chunks": self.store.query("SELECT COUNT(*) AS n FROM chunks WHERE tenant_id = ?", [ctx.tenant_id])[0]["n"],
            "vectors": self.vectors.count(ctx.tenant_id),
            "keyword_docs": self.keywords.count(ctx.tenant_id),
        }
