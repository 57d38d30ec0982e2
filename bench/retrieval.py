"""Retrieval benchmark: the product's hybrid search against bm25s, dense and plain-RRF baselines,
computed in the same run on the same data (one paragraph = one source)."""
from __future__ import annotations

import time
from dataclasses import replace

import bm25s
import numpy as np
import Stemmer

from bench.datasets import RETRIEVAL_SETS, RetrievalSet, load_retrieval
from bench.harness import cached_embedder, percentiles, scratch_settings
from core.base.language import fold
from core.knowledge import sources
from core.knowledge.retrieval import Tuning
from core.runtime import Runtime, open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant

STEMMERS = {"es": "spanish", "pt": "portuguese", "en": "english"}


def build_product(rs: RetrievalSet, embedder, tuning: Tuning | None = None) -> tuple[Runtime, object]:
    """A fresh data dir with one tenant whose sources are the set's paragraphs, trained."""
    settings = scratch_settings(rs.name)
    rt = open_runtime(settings, embedder=embedder, tuning=tuning)
    create_tenant(rt.store, "bench")
    ctx = local_operator(rt.store, "bench")
    for path, (title, text) in rs.paragraphs.items():
        sources.save(ctx, rt.store, path, title=title, content=text, type="text", language=rs.kb_language)
    rt.index.train(ctx)
    return rt, ctx


def product_ranks(rt: Runtime, ctx, rs: RetrievalSet) -> tuple[list[int | None], list[float]]:
    """Rank (1-based) of the gold paragraph among the selected chunks, or None; and latencies."""
    ranks, latencies = [], []
    for _qid, question, gold in rs.questions:
        started = time.perf_counter()
        result = rt.retriever.search(ctx, question)
        latencies.append(time.perf_counter() - started)
        paths = list(dict.fromkeys(h.path for h in result.hits))
        ranks.append(paths.index(gold) + 1 if gold in paths else None)
    return ranks, latencies


def _bm25_tokens(texts: list[str], lang: str, return_ids: bool = True):
    stop = [fold(w) for w in bm25s.stopwords.STOPWORDS_SPANISH] if lang == "es" else (
        [fold(w) for w in bm25s.stopwords.STOPWORDS_PORTUGUESE] if lang == "pt" else "en")
    return bm25s.tokenize([fold(t) for t in texts], stopwords=stop, stemmer=Stemmer.Stemmer(STEMMERS[lang]),
                          show_progress=False, return_ids=return_ids)


def baseline_ranks(rs: RetrievalSet, embedder) -> dict[str, tuple[list[int | None], list[float]]]:
    """bm25s alone, dense alone (query: vs passage: cosine), and RRF (k=60) of the two."""
    paths = list(rs.paragraphs)
    texts = [rs.paragraphs[p][1] for p in paths]
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index(_bm25_tokens(texts, rs.kb_language), show_progress=False)
    passages = embedder.passages(texts)
    out: dict[str, tuple[list, list]] = {"bm25s": ([], []), "dense": ([], []), "rrf": ([], [])}
    for _qid, question, gold in rs.questions:
        gold_index = paths.index(gold)
        started = time.perf_counter()
        scores = retriever.get_scores(_bm25_tokens([question], rs.kb_language, return_ids=False)[0])
        bm25_order = np.argsort(-scores, kind="stable")
        bm25_time = time.perf_counter() - started
        started = time.perf_counter()
        query = embedder.queries([question])[0]
        dense_order = np.argsort(-(passages @ query), kind="stable")
        dense_time = time.perf_counter() - started
        rrf = np.zeros(len(paths))
        rrf[bm25_order] += 1.0 / (60 + np.arange(1, len(paths) + 1))
        rrf[dense_order] += 1.0 / (60 + np.arange(1, len(paths) + 1))
        rrf_order = np.argsort(-rrf, kind="stable")
        for name, order, spent in (("bm25s", bm25_order, bm25_time), ("dense", dense_order, dense_time),
                                   ("rrf", rrf_order, bm25_time + dense_time)):
            out[name][0].append(int(np.where(order == gold_index)[0][0]) + 1)
            out[name][1].append(spent)
    return out


def metrics(ranks: list[int | None]) -> dict:
    n = len(ranks) or 1
    return {
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@6": round(sum(1 for r in ranks if r is not None and r <= 6) / n, 3),
        "mrr": round(sum(1.0 / r for r in ranks if r is not None and r <= 6) / n, 3),
    }


def run(datasets: list[str] | None, split: str) -> dict:
    embedder = cached_embedder(cache_queries=False)  # the product embeds each query live: honest latency
    baseline_embedder = cached_embedder(cache_queries=True)
    report: dict = {"split": split, "datasets": {},
                    "note": "MRR is MRR@6 for every system (the product selects at most 6 chunks)"}
    for name in datasets or RETRIEVAL_SETS:
        rs = load_retrieval(name, split)
        started = time.perf_counter()
        rt, ctx = build_product(rs, embedder)
        build_seconds = time.perf_counter() - started
        ranks, latencies = product_ranks(rt, ctx, rs)
        entry = {"paragraphs": len(rs.paragraphs), "questions": len(rs.questions),
                 "build_seconds": round(build_seconds, 1),
                 "cobertura": {**metrics(ranks), **percentiles(latencies)}}
        for baseline, (b_ranks, b_lat) in baseline_ranks(rs, baseline_embedder).items():
            entry[baseline] = {**metrics(b_ranks), **percentiles(b_lat)}
        entry["beats_all_baselines"] = all(
            entry["cobertura"][m] > entry[b][m] for b in ("bm25s", "dense", "rrf") for m in ("hit@1", "mrr"))
        report["datasets"][name] = entry
        rt.close()
    return report


def tune(split: str = "dev", grid: list[Tuning] | None = None) -> list[dict]:
    """Evaluate a grid of Tuning values on a split (dev only: test is for reporting)."""
    if split != "dev":
        raise SystemExit("Tune on the dev split only.")
    embedder = cached_embedder(cache_queries=True)
    built = {name: build_product(load_retrieval(name, split), embedder) for name in RETRIEVAL_SETS}
    sets = {name: load_retrieval(name, split) for name in RETRIEVAL_SETS}
    rows = []
    for tuning in grid or [Tuning()]:
        row = {"tuning": {k: v for k, v in tuning.__dict__.items()}}
        for name, (rt, ctx) in built.items():
            rt.retriever.tuning = tuning
            ranks, _ = product_ranks(rt, ctx, sets[name])
            row[name] = metrics(ranks)
        rows.append(row)
    return rows


__all__ = ["run", "tune", "replace"]
