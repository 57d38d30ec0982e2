"""The per-tenant vector index (chromadb): one collection per tenant, cosine space.

chromadb filters metadata after the ANN search, so tenants get separate collections rather than a
shared one with a where-clause. Distances are converted to similarities here and nowhere else.

Several processes share one data dir (the admin app trains, ``python -m api`` answers). chromadb's embedded
``PersistentClient`` keeps each collection's HNSW graph in memory, so a process that did not write goes on
searching its old graph: new chunks are never found and deleted ones end in "Error finding id". Hence, in
embedded mode, every write takes ``locks/vectors`` exclusively and bumps ``locks/vectors.version``; every read
takes it shared and, when the version moved since this process opened its client, reopens the client first
(it then loads the graphs as written). A writer reopens too before writing, so a stale graph never overwrites
another process's work. With a Chroma server (``COBERTURA_CHROMA_HOST``) the server is the one owner and none
of this is needed.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings

from core.base.config import Settings
from core.base.locks import Counter, FileLock, ReadWrite
from core.knowledge.embeddings import CoberturaEmbeddingFunction, Embedder

#: How long a search waits for another process's write to the vectors (one training batch) before giving up.
READ_WAIT_SECONDS = 30.0
WRITE_WAIT_SECONDS = 120.0

_clients: dict[str, SharedClient] = {}
_clients_lock = threading.Lock()


def similarity_from_distance(distance: float) -> float:
    """chromadb's cosine distance (1 - cos) as a cosine similarity: the one adapter."""
    return 1.0 - float(distance)


class SharedClient:
    """One chromadb client per data dir (or server) per process, reopened when another process wrote."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.embedded = not settings.chroma_host
        locks = settings.data_dir / "locks"
        self.lock, self.version = FileLock(locks / "vectors.lock"), Counter(locks / "vectors.version")
        self.local = ReadWrite()
        self.collections: dict[int, object] = {}
        self.seen = self.version.read() if self.embedded else 0
        self.client = self._open()

    def _open(self):
        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if not self.embedded:
            return chromadb.HttpClient(host=self.settings.chroma_host, port=self.settings.chroma_port,
                                       settings=chroma_settings)
        self.settings.chroma_dir.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(self.settings.chroma_dir), settings=chroma_settings)

    def _catch_up(self, current: int) -> None:
        """Reopen the client if another process wrote since it was opened (no thread of ours is inside it)."""
        if current == self.seen:
            return
        with self.local.write():
            if current != self.seen:
                self.collections.clear()
                self.client.close()
                self.client = self._open()
                self.seen = current

    @contextmanager
    def reading(self) -> Iterator[object]:
        if not self.embedded:
            yield self.client
            return
        with self.lock.shared(READ_WAIT_SECONDS):
            self._catch_up(self.version.read())
            with self.local.read():
                yield self.client

    @contextmanager
    def writing(self) -> Iterator[object]:
        if not self.embedded:
            yield self.client
            return
        with self.lock.exclusive(WRITE_WAIT_SECONDS, what="writing vectors"):
            self._catch_up(self.version.read())
            try:  # (no reader of this process is inside: readers hold the lock shared)
                yield self.client
            finally:  # even a failed write may have changed the files: every other process reopens
                self.seen = self.version.bump()


def shared_client(settings: Settings) -> SharedClient:
    key = f"{settings.chroma_host}:{settings.chroma_port}" if settings.chroma_host else str(settings.chroma_dir)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = SharedClient(settings)
        return _clients[key]


@dataclass(frozen=True)
class VectorHit:
    chunk_id: str
    similarity: float


class VectorIndex:
    def __init__(self, settings: Settings, embedder: Embedder):
        self.shared = shared_client(settings)
        self.function = CoberturaEmbeddingFunction(embedder)
        self.embedder_name = embedder.name

    @staticmethod
    def collection_name(tenant_id: int) -> str:
        return f"tenant_{int(tenant_id)}"

    def _collection(self, client, tenant_id: int):
        cached = self.shared.collections
        if tenant_id not in cached:
            cached[tenant_id] = client.get_or_create_collection(
                self.collection_name(tenant_id),
                embedding_function=self.function,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"embedder": self.embedder_name},
            )
        return cached[tenant_id]

    def replace(self, tenant_id: int, source_ids: list[int], ids: list[str], vectors: np.ndarray,
                metadatas: list[dict]) -> None:
        """Put the new chunks of ``source_ids`` in, then delete their other chunks (idempotent on redo). In this
        order a search meanwhile finds a source's old chunks or its new ones, never none."""
        with self.shared.writing() as client:
            collection = self._collection(client, tenant_id)
            before = collection.get(where={"source_id": {"$in": [int(s) for s in source_ids]}}, include=[])["ids"] \
                if source_ids else []
            batch = client.get_max_batch_size()
            for i in range(0, len(ids), batch):
                collection.upsert(ids=ids[i : i + batch], embeddings=vectors[i : i + batch],
                                  metadatas=metadatas[i : i + batch])
            stale = sorted(set(before) - set(ids))
            for i in range(0, len(stale), batch):
                collection.delete(ids=stale[i : i + batch])

    def keep_only(self, tenant_id: int, chunk_ids: set[str]) -> int:
        """Delete every vector of the tenant that is not one of ``chunk_ids``; how many were deleted."""
        with self.shared.writing() as client:
            collection = self._collection(client, tenant_id)
            stale = sorted(set(collection.get(include=[])["ids"]) - chunk_ids)
            batch = client.get_max_batch_size()
            for i in range(0, len(stale), batch):
                collection.delete(ids=stale[i : i + batch])
            return len(stale)

    def search(self, tenant_id: int, vector: np.ndarray, limit: int) -> list[VectorHit]:
        # no count() first: it costs as much as the query, and chromadb answers fewer results when it has fewer
        with self.shared.reading() as client:
            result = self._collection(client, tenant_id).query(query_embeddings=[vector], n_results=limit,
                                                               include=["distances"])
        return [VectorHit(cid, similarity_from_distance(d)) for cid, d in zip(result["ids"][0], result["distances"][0])]

    def similarities(self, tenant_id: int, vector: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        """Exact cosine similarity of given chunks to the query vector (for keyword-only candidates)."""
        if not chunk_ids:
            return {}
        with self.shared.reading() as client:
            got = self._collection(client, tenant_id).get(ids=list(chunk_ids), include=["embeddings"])
        if not len(got["ids"]):
            return {}
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        sims = matrix @ np.asarray(vector, dtype=np.float32)
        return {cid: float(s) for cid, s in zip(got["ids"], sims)}

    def count(self, tenant_id: int) -> int:
        with self.shared.reading() as client:
            return self._collection(client, tenant_id).count()

    def embedded_by_another(self, tenant_id: int) -> bool:
        """Whether the tenant's collection holds vectors of another embedder (or of one it did not record)."""
        with self.shared.reading() as client:
            try:
                collection = client.get_collection(self.collection_name(tenant_id))
            except (ValueError, chromadb.errors.NotFoundError):
                return False
            return (collection.metadata or {}).get("embedder") != self.embedder_name and collection.count() > 0

    def drop(self, tenant_id: int) -> None:
        with self.shared.writing() as client:
            self.shared.collections.pop(tenant_id, None)
            try:
                client.delete_collection(self.collection_name(tenant_id))
            except (ValueError, chromadb.errors.NotFoundError):
                pass
