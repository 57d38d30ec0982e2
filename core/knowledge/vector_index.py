"""The per-tenant vector index (chromadb): one collection per tenant, cosine space.

chromadb filters metadata after the ANN search, so tenants get separate collections rather than a
shared one with a where-clause. Distances are converted to similarities here and nowhere else.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings

from core.base.config import Settings
from core.knowledge.embeddings import CoberturaEmbeddingFunction, Embedder

_clients: dict[str, object] = {}
_clients_lock = threading.Lock()


def similarity_from_distance(distance: float) -> float:
    """chromadb's cosine distance (1 - cos) as a cosine similarity: the one adapter."""
    return 1.0 - float(distance)


def chroma_client(settings: Settings):
    """One client per data dir (or server) per process, as chromadb expects."""
    key = f"{settings.chroma_host}:{settings.chroma_port}" if settings.chroma_host else str(settings.chroma_dir)
    with _clients_lock:
        if key not in _clients:
            chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
            if settings.chroma_host:
                _clients[key] = chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port,
                                                    settings=chroma_settings)
            else:
                settings.chroma_dir.mkdir(parents=True, exist_ok=True)
                _clients[key] = chromadb.PersistentClient(path=str(settings.chroma_dir), settings=chroma_settings)
        return _clients[key]


@dataclass(frozen=True)
class VectorHit:
    chunk_id: str
    similarity: float


class VectorIndex:
    def __init__(self, settings: Settings, embedder: Embedder):
        self.client = chroma_client(settings)
        self.function = CoberturaEmbeddingFunction(embedder)
        self._collections: dict[int, object] = {}

    @staticmethod
    def collection_name(tenant_id: int) -> str:
        return f"tenant_{int(tenant_id)}"

    def _collection(self, tenant_id: int):
        if tenant_id not in self._collections:
            self._collections[tenant_id] = self.client.get_or_create_collection(
                self.collection_name(tenant_id),
                embedding_function=self.function,
                configuration={"hnsw": {"space": "cosine"}},
            )
        return self._collections[tenant_id]

    def replace(self, tenant_id: int, source_ids: list[int], ids: list[str], vectors: np.ndarray,
                metadatas: list[dict]) -> None:
        """Delete every chunk of ``source_ids`` then add the new ones (idempotent on redo)."""
        collection = self._collection(tenant_id)
        if source_ids:
            collection.delete(where={"source_id": {"$in": [int(s) for s in source_ids]}})
        batch = self.client.get_max_batch_size()
        for i in range(0, len(ids), batch):
            collection.upsert(ids=ids[i : i + batch], embeddings=vectors[i : i + batch],
                              metadatas=metadatas[i : i + batch])

    def search(self, tenant_id: int, vector: np.ndarray, limit: int) -> list[VectorHit]:
        # no count() first: it costs as much as the query, and chromadb answers fewer results when it has fewer
        result = self._collection(tenant_id).query(query_embeddings=[vector], n_results=limit, include=["distances"])
        return [VectorHit(cid, similarity_from_distance(d)) for cid, d in zip(result["ids"][0], result["distances"][0])]

    def similarities(self, tenant_id: int, vector: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        """Exact cosine similarity of given chunks to the query vector (for keyword-only candidates)."""
        if not chunk_ids:
            return {}
        got = self._collection(tenant_id).get(ids=list(chunk_ids), include=["embeddings"])
        if not len(got["ids"]):
            return {}
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        sims = matrix @ np.asarray(vector, dtype=np.float32)
        return {cid: float(s) for cid, s in zip(got["ids"], sims)}

    def count(self, tenant_id: int) -> int:
        return self._collection(tenant_id).count()

    def drop(self, tenant_id: int) -> None:
        self._collections.pop(tenant_id, None)
        try:
            self.client.delete_collection(self.collection_name(tenant_id))
        except (ValueError, chromadb.errors.NotFoundError):
            pass
