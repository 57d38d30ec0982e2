"""Tune the retrieval thresholds on the dev split only: search once per question with nothing dropped,
then re-rank the recorded candidates under every grid point with the product's own pure functions."""
from __future__ import annotations

import itertools
from dataclasses import replace

from bench.datasets import RETRIEVAL_SETS, load_retrieval
from bench.harness import cached_embedder
from bench.retrieval import build_product, metrics
from core.knowledge.retrieval import Tuning, covers_all_terms, fuse, order_by_trust, select

WIDE = Tuning(min_similarity=-1.0, relative_margin=10.0, max_chunks=60, max_chars=10**9, tie_margin=0.0,
              qa_close_similarity=2.0)


def _record(name: str, embedder) -> list[dict]:
    rs = load_retrieval(name, "dev")
    rt, ctx = build_product(rs, embedder, tuning=WIDE)
    rows = []
    for _qid, question, gold in rs.questions:
        result = rt.retriever.search(ctx, question)
        rows.append({
            "gold": gold, "lang": result.language,
            "hits": [(h, covers_all_terms(result.rewritten, f"{h.title}\n{h.text}", h.language)) for h in result.hits],
        })
    rt.close()
    return rows


def _evaluate(rows: list[dict], tuning: Tuning) -> dict:
    ranks = []
    for row in rows:
        bm25_max = max((h.bm25 for h, _ in row["hits"]), default=0.0)
        kept = []
        best = max((h.similarity for h, _ in row["hits"]), default=0.0)
        floor = max(tuning.min_similarity, best - tuning.relative_margin)
        for hit, covers in row["hits"]:
            scored = replace(hit, score=fuse(hit.similarity, hit.bm25, bm25_max, hit.language == row["lang"], tuning))
            if hit.similarity >= floor or (hit.bm25 > 0 and covers):
                kept.append(scored)
        chosen, _ = select(order_by_trust(kept, tuning), tuning)
        paths = list(dict.fromkeys(h.path for h in chosen))
        ranks.append(paths.index(row["gold"]) + 1 if row["gold"] in paths else None)
    return metrics(ranks)


def run() -> dict:
    embedder = cached_embedder(cache_queries=True)
    recorded = {name: _record(name, embedder) for name in RETRIEVAL_SETS}
    grid = []
    for same, other, floor, margin in itertools.product(
        (0.02, 0.03, 0.04, 0.06, 0.08), (0.0, 0.01, 0.02, 0.03, 0.04, 0.06), (0.70, 0.74, 0.78),
        (0.05, 0.08, 0.10, 0.15, 1.0),
    ):
        tuning = replace(Tuning(), keyword_weight_same_language=same, keyword_weight_other_language=other,
                         min_similarity=floor, relative_margin=margin)
        row = {"same": same, "other": other, "floor": floor, "margin": margin}
        for name, rows in recorded.items():
            row[name] = _evaluate(rows, tuning)
        row["mean_hit1"] = round(sum(row[n]["hit@1"] for n in recorded) / len(recorded), 4)
        row["mean_mrr"] = round(sum(row[n]["mrr"] for n in recorded) / len(recorded), 4)
        row["min_hit6"] = min(row[n]["hit@6"] for n in recorded)
        grid.append(row)
    grid.sort(key=lambda r: (-r["mean_hit1"], -r["mean_mrr"]))
    default = Tuning()
    key = (default.keyword_weight_same_language, default.keyword_weight_other_language, default.min_similarity,
           default.relative_margin)
    return {"split": "dev", "best": grid[:25],
            "default": next((r for r in grid if (r["same"], r["other"], r["floor"], r["margin"]) == key), None)}
