"""Gap merging and PII masking, through the product's own ``Backlog.record`` (mask, embed, match, store).

- BANKING77: every utterance of the split is recorded, in a fixed shuffled order, into one tenant
  (online, as questions arrive). Same category should share a gap, different must not: pairwise
  precision / recall / F1 over utterance pairs, and the number of gaps vs categories.
- PAWS-X es: each labelled pair in a fresh tenant; merged = the second sentence joined the first's gap.
  Merge precision (and recall) on the labels.
- XQuAD es<->en: every question of the split in both languages recorded into one tenant, shuffled.
  Cross-language merge recall = share of question ids whose es and en versions share a gap; pairwise
  precision over question ids (other questions on the same paragraph are the hard negatives).
- PII: ``bench.pii.evaluate`` (presidio synth, MEDDOCAN, ordinary questions left unchanged).
- BANKING77 references (not the product): what the embedder allows at all on the same utterances.
  ``offline_ward_known_k``: Ward clustering of all of them at once, told the true number of
  categories (an online merger sees one question at a time and knows neither). ``supervised``: a
  softmax classifier fitted on labelled utterances (test: all of train.csv; dev: a random half of it,
  scored on the other half) assigning categories; it needs the labels no backlog has.

    python -m bench gaps --split dev|test [--skip-banking]
"""
from __future__ import annotations

import csv
import json
import random
import time
from collections import Counter

import numpy as np

from bench.datasets import data_root, split_of
from bench.harness import cached_embedder, percentiles, scratch_settings
from core.base.store import Store
from core.gaps.backlog import Backlog
from core.gaps.matching import GapTuning
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant

SEED = 0


def pairwise(predicted: list[int], gold: list[str]) -> dict:
    """Pairwise precision/recall/F1 of a clustering against gold labels (from the contingency table)."""
    def pairs(counts) -> int:
        return sum(n * (n - 1) // 2 for n in counts.values())

    together = pairs(Counter(zip(predicted, gold)))
    predicted_pairs, gold_pairs = pairs(Counter(predicted)), pairs(Counter(gold))
    p = together / predicted_pairs if predicted_pairs else 1.0
    r = together / gold_pairs if gold_pairs else 1.0
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(2 * p * r / (p + r) if p + r else 0.0, 3),
            "gaps": len(set(predicted)), "categories": len(set(gold))}


class _Tenants:
    """Fresh tenants in one scratch store, recorded through one Backlog."""

    def __init__(self, tuning: GapTuning, embedder):
        self.store = Store(scratch_settings("gaps").db_path)
        self.backlog = Backlog(self.store, embedder, tuning)
        self.n = 0
        self.latencies: list[float] = []

    def new(self):
        self.n += 1
        create_tenant(self.store, f"t{self.n}", f"Bench {self.n}")
        return local_operator(self.store, f"t{self.n}", "bench")

    def record(self, ctx, text: str, language: str) -> int:
        started = time.perf_counter()
        gap = self.backlog.record(ctx, text, language, "web", "bench")
        self.latencies.append(time.perf_counter() - started)
        if gap is None:
            raise RuntimeError("masking failed during the benchmark")
        return gap


def banking(split: str, tenants: _Tenants) -> dict:
    name = "train.csv" if split == "dev" else "test.csv"
    with open(data_root() / "paraphrase/banking77" / name, encoding="utf-8", newline="") as f:
        rows = [(r["text"], r["category"]) for r in csv.DictReader(f)]
    random.Random(SEED).shuffle(rows)
    ctx = tenants.new()
    predicted = [tenants.record(ctx, text, "en") for text, _ in rows]
    return {"utterances": len(rows), **pairwise(predicted, [c for _, c in rows])}


def banking_references(split: str, embedder) -> dict:
    from scipy.cluster.hierarchy import fcluster, linkage

    from core.knowledge.variants import FitSettings, fit

    def load(name: str) -> list[tuple[str, str]]:
        with open(data_root() / "paraphrase/banking77" / name, encoding="utf-8", newline="") as f:
            return [(r["text"], r["category"]) for r in csv.DictReader(f)]

    train = load("train.csv")
    random.Random(SEED).shuffle(train)
    if split == "test":
        fitted_on, scored = train, load("test.csv")
    else:
        fitted_on, scored = train[: len(train) // 2], train[len(train) // 2:]
    categories = sorted({c for _, c in train})
    weights, bias = fit(embedder.queries([t for t, _ in fitted_on]),
                        np.array([categories.index(c) for _, c in fitted_on]), len(categories))
    vectors = embedder.queries([t for t, _ in scored])
    supervised = pairwise(list(((vectors * FitSettings().scale) @ weights + bias).argmax(axis=1)),
                          [c for _, c in scored])
    sample = scored[:3080]  # Ward is quadratic in memory: the test split's size
    labels = fcluster(linkage(vectors[: len(sample)], "ward"), len({c for _, c in sample}), "maxclust")
    return {"supervised": supervised, "offline_ward_known_k": {"utterances": len(sample),
                                                                **pairwise(list(labels), [c for _, c in sample])}}


def paws(split: str, tenants: _Tenants) -> dict:
    path = data_root() / "paraphrase/pawsx/dev-es.tsv"
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if split_of(r["row"]) == split]
    merged, positive, both = 0, 0, 0
    for row in rows:
        ctx = tenants.new()
        same = tenants.record(ctx, row["sentence1"], "es") == tenants.record(ctx, row["sentence2"], "es")
        label = row["label"] == "1"
        merged += same
        positive += label
        both += same and label
    return {"pairs": len(rows), "paraphrases": positive, "merged": merged,
            "merge_precision": round(both / merged, 3) if merged else None,
            "merge_recall": round(both / positive, 3) if positive else None}


def xquad(split: str, tenants: _Tenants) -> dict:
    items = []
    for lang in ("es", "en"):
        data = json.loads((data_root() / f"retrieval_qa/xquad/xquad.{lang}.json").read_text(encoding="utf-8"))["data"]
        items += [(q["id"], q["question"], lang) for article in data if split_of(article["title"]) == split
                  for paragraph in article["paragraphs"] for q in paragraph["qas"]]
    random.Random(SEED).shuffle(items)
    ctx = tenants.new()
    gap_of = {(qid, lang): tenants.record(ctx, text, lang) for qid, text, lang in items}
    ids = sorted({qid for qid, _, _ in items})
    recall = sum(gap_of[(q, "es")] == gap_of[(q, "en")] for q in ids) / len(ids)
    keys = list(gap_of)
    clusters = pairwise([gap_of[k] for k in keys], [k[0] for k in keys])
    return {"questions": len(ids), "cross_language_merge_recall": round(recall, 3),
            "pairwise_precision": clusters["precision"], "gaps": clusters["gaps"]}


def run(split: str, skip_banking: bool = False, tuning: GapTuning | None = None) -> dict:
    from bench.pii import evaluate as pii_evaluate

    tuning = tuning or GapTuning()
    tenants = _Tenants(tuning, cached_embedder())
    report: dict = {"split": split, "tuning": tuning.__dict__}
    started = time.perf_counter()
    report["paws_x_es"] = paws(split, tenants)
    report["xquad_es_en"] = xquad(split, tenants)
    if not skip_banking:
        report["banking77"] = banking(split, tenants)
        report["banking77_references"] = banking_references(split, tenants.backlog.embedder)
    report["record_latency"] = percentiles(tenants.latencies)
    report["merging_seconds"] = round(time.perf_counter() - started, 1)
    report["pii"] = pii_evaluate(split)
    return report
