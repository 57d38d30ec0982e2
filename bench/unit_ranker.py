"""``python -m bench.unit_ranker [--split dev]``: fit the offline responder's release weights (JSON on stdout).

Every question of four sets is asked through the product (the real search tool, the offline responder): the
real-documents set (``bench docs``), the generated catalog (``bench.catalog``), XQuAD-es and English questions
over XQuAD-es (``bench trust``'s half-KB tenants). For each question the candidate units the responder weighs
(``OfflineResponder._scored`` over the passages it was given) are recorded with their ``UnitEvidence``; a unit is
right when it holds the question's fact from the right source. The
weights maximise, question by question, the softmax probability of the right units (listwise logistic regression,
L2 0.01, scipy L-BFGS), documents weighted 1 and the other sets 0.5 each. Reported: each set's share of questions
whose best-scored unit is right, with the shipped weights, with the fitted ones and in 5-fold cross-validation.
Copy ``weights`` into ``core/agent/providers/unit_ranking.WEIGHTS``. Tune on dev only: the test splits are for
reporting.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

from core.agent.providers.offline import OfflineResponder
from core.agent.providers.unit_ranking import FEATURES, WEIGHTS

SET_WEIGHT = {"docs": 1.0, "catalog": 0.5, "xquad-es": 0.5, "xquad-en-es": 0.5}
L2 = 0.01


class RecordingResponder(OfflineResponder):
    """The offline responder, keeping what each compose was given."""

    def __init__(self):
        super().__init__()
        self.seen: dict[str, tuple[str, list[dict]]] = {}

    def compose(self, question, lang, passages, revision=False, unknown=()):
        self.seen[question] = (lang, [dict(p) for p in passages])
        return super().compose(question, lang, passages, revision, unknown)


def _units(responder: RecordingResponder, question: str) -> list:
    lang, passages = responder.seen.get(question, (None, []))
    if lang is None:
        return []
    return responder._scored(question, lang, passages[: responder.tuning.passages_considered])


def _ask(rt, ctx, questions: list[str]) -> RecordingResponder:
    from core.agent.loop import Agent

    responder = RecordingResponder()
    agent = Agent(rt, responder)
    for question in questions:
        rt.turns.run(ctx, agent, question, channel="web")
    return responder


def _flat(text: str) -> str:
    return " ".join(text.replace("**", "").split()).lower()


def _tenant(name: str, embedder):
    """A throw-away runtime with one tenant, and its operator context."""
    from bench.harness import scratch_settings
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    rt = open_runtime(scratch_settings(name), embedder=embedder)
    create_tenant(rt.store, "bench")
    return rt, local_operator(rt.store, "bench")


def docs_groups(split: str, embedder) -> list[tuple[list, list[bool]]]:
    from bench import docs

    rt, ctx = _tenant("ranker-docs", embedder)
    mapping, _ = docs._import(ctx, rt.store, docs.documents(split))
    rt.index.train(ctx)
    covered = [q for q in docs.load_questions(split) if q["doc"]]
    responder, source = _asked(rt, ctx, [q["question"] for q in covered])
    return [(units, [source.get(u.passage_id) == mapping.get(q["doc"]) and docs.has_fact(u.text, q["facts"])
                     for u in units]) for q in covered for units in [_units(responder, q["question"])]]


def _asked(rt, ctx, questions: list[str]) -> tuple[RecordingResponder, dict[str, str]]:
    """Every question asked (the runtime closed after), and the source path of every passage seen."""
    responder = _ask(rt, ctx, questions)
    rt.close()
    return responder, {p["id"]: p.get("source") for _, passages in responder.seen.values() for p in passages}


def catalog_groups(split: str, embedder) -> list[tuple[list, list[bool]]]:
    from bench import catalog
    from core.knowledge.ingest import import_paths

    generated = catalog.generate(split)
    rt, ctx = _tenant("ranker-catalog", embedder)
    with tempfile.TemporaryDirectory(prefix="cobertura-ranker-") as tmp:
        catalog.write(generated, Path(tmp))
        report = import_paths(ctx, rt.store, sorted(Path(tmp).iterdir()), prefix=catalog.PREFIX)
    owners = catalog._owners(generated, report.saved)
    rt.index.train(ctx)
    covered = [q for q in generated["questions"] if q["kind"] == "covered"]
    responder, source = _asked(rt, ctx, [q["question"] for q in covered])
    return [(units, [owners.get(source.get(u.passage_id), (None,))[0] == q["code"] and q["fact"].lower() in
                     _flat(u.text) for u in units]) for q in covered for units in [_units(responder, q["question"])]]


def xquad_groups(name: str, split: str, embedder) -> list[tuple[list, list[bool]]]:
    from bench import trust

    rt, ctx, _, questions = trust.half_kb(name, split, embedder)
    gold = trust.answers_of(name, split)
    in_kb = [(qid, question) for qid, question, _, inside in questions if inside]
    responder = _ask(rt, ctx, [question for _, question in in_kb])
    rt.close()
    out = []
    for qid, question in in_kb:
        units = _units(responder, question)
        out.append((units, [any(a in u.text for a in gold[qid]) for u in units]))
    return out


def _matrices(groups: dict[str, list]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(set, unit features, right) per question that has a right unit among its candidates."""
    return [(name, np.array([u.evidence.vector() for u in units]), np.array(right, dtype=float))
            for name, rows in groups.items() for units, right in rows if units and any(right)]


def _loss(w: np.ndarray, data: list) -> tuple[float, np.ndarray]:
    total, grad = 0.0, np.zeros_like(w)
    for name, x, y in data:
        s = x @ w
        p = np.exp(s - s.max())
        p /= p.sum()
        right = p * (y > 0)
        mass = max(right.sum(), 1e-12)
        total -= SET_WEIGHT[name] * math.log(mass)
        grad -= SET_WEIGHT[name] * (x.T @ (right / mass - p))
    return total + L2 * float(w @ w), grad + 2 * L2 * w


def fit(data: list) -> np.ndarray:
    from scipy.optimize import minimize

    start = np.zeros(len(FEATURES))
    start[FEATURES.index("similarity")] = 1.0
    return minimize(_loss, start, args=(data,), jac=True, method="L-BFGS-B").x


def top_right(w: np.ndarray, data: list) -> dict[str, float]:
    """Per set: the share of questions whose best-scored unit is a right one."""
    out = {}
    for name in SET_WEIGHT:
        rows = [y[int(np.argmax(x @ w))] > 0 for n, x, y in data if n == name]
        out[name] = round(sum(rows) / len(rows), 3) if rows else None
    return out


def cross_validated(data: list, folds: int = 5) -> dict[str, float]:
    order = list(range(len(data)))
    random.Random(0).shuffle(order)
    hits = dict.fromkeys(SET_WEIGHT, 0)
    for k in range(folds):
        held = set(order[k::folds])
        w = fit([d for i, d in enumerate(data) if i not in held])
        for i in held:
            name, x, y = data[i]
            hits[name] += bool(y[int(np.argmax(x @ w))] > 0)
    sizes = {name: sum(1 for n, _, _ in data if n == name) for name in SET_WEIGHT}
    return {name: round(hits[name] / sizes[name], 3) if sizes[name] else None for name in SET_WEIGHT}


def run(split: str) -> dict:
    from bench.harness import cached_embedder

    embedder = cached_embedder(cache_queries=True)
    groups = {"docs": docs_groups(split, embedder), "catalog": catalog_groups(split, embedder),
              "xquad-es": xquad_groups("xquad-es", split, embedder),
              "xquad-en-es": xquad_groups("xquad-en-es", split, embedder)}
    data = _matrices(groups)
    weights = fit(data)
    shipped = np.array([WEIGHTS[name] for name in FEATURES])
    return {"split": split, "questions": {name: len(rows) for name, rows in groups.items()},
            "with_a_right_unit": {name: sum(1 for units, right in rows if any(right)) for name, rows in groups.items()},
            "top_unit_right": {"shipped": top_right(shipped, data), "fitted": top_right(weights, data),
                               "fitted_5_fold": cross_validated(data)},
            "weights": {name: round(float(v), 2) for name, v in zip(FEATURES, weights)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.unit_ranker", description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev",
                        help="dev to fit; test only to report how the shipped weights do there")
    args = parser.parse_args(argv)
    json.dump(run(args.split), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
