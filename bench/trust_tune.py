"""Tune the offline responder's answer/abstain thresholds on the dev split only: search once per
question through the agent's own tool, then re-compose and re-judge under every grid point."""
from __future__ import annotations

import itertools
import json

from bench.harness import cached_embedder
from bench.trust import answers_of, clinc, clinc_kb, half_kb
from core.agent import prompts
from core.agent.builtin_tools import search
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.agent.registry import ToolEnv, TurnEvidence
from core.base.language import detect
from core.grounding.gate import Evidence, check


def _record_qa(name: str, embedder) -> list[dict]:
    rt, ctx, _kept, questions = half_kb(name, "dev", embedder)
    gold = answers_of(name, "dev")
    rows = []
    for qid, question, _path, in_kb in questions:
        evidence = TurnEvidence()
        result = search(ToolEnv(ctx, rt, [], evidence), question)
        rows.append({"question": question, "in": in_kb, "gold": gold[qid], "passages": result.get("results", []),
                     "texts": dict(result.get("_texts", {}))})
    return rows


def _record_clinc(embedder) -> list[dict]:
    train, evaluation = clinc("dev")
    rt, ctx = clinc_kb(train, embedder)
    rows = []
    for utterance, intent in evaluation:
        evidence = TurnEvidence()
        result = search(ToolEnv(ctx, rt, [], evidence), utterance)
        rows.append({"question": utterance, "intent": intent, "passages": result.get("results", []),
                     "texts": dict(result.get("_texts", {}))})
    return rows


def _answer(tuning: OfflineTuning, row: dict) -> tuple[bool, list[str]]:
    lang = detect(row["question"])
    text = OfflineResponder(tuning).compose(row["question"], lang, row["passages"])
    verdict = check(text, Evidence(row["texts"]), prompts.exempt_sentences())
    if not verdict.ok:
        return False, []
    cited = [c for v in verdict.claims for c in v.claim.citations]
    return True, cited


def evaluate_text(tuning: OfflineTuning, qa_rows: dict[str, list[dict]]) -> dict:
    out = {}
    for name, rows in qa_rows.items():
        inside = [r for r in rows if r["in"]]
        outside = [r for r in rows if not r["in"]]
        correct = 0
        for r in inside:
            ok, cited = _answer(tuning, r)
            correct += ok and any(a in r["texts"][c] for c in cited for a in r["gold"] if c in r["texts"])
        refused = sum(1 for r in outside if not _answer(tuning, r)[0])
        out[name] = {"in_correct": round(correct / len(inside), 3), "out_abstained": round(refused / len(outside), 3)}
    return out


def evaluate_clinc(tuning: OfflineTuning, clinc_rows: list[dict]) -> dict:
    right = oos = refused = inscope = 0
    for r in clinc_rows:
        ok, cited = _answer(tuning, r)
        if r["intent"] == "oos":
            oos += 1
            refused += not ok
        else:
            inscope += 1
            paths = {p["id"]: p["source"] for p in r["passages"]}
            right += ok and any(paths.get(c, "").split("/")[1:2] == [r["intent"]] for c in cited)
    return {"in_scope_accuracy": round(right / max(inscope, 1), 3), "oos_recall": round(refused / max(oos, 1), 3)}


def run() -> dict:
    """Text thresholds only act on text passages and Q&A thresholds on Q&A pairs: two separate grids."""
    embedder = cached_embedder(cache_queries=True)
    qa_rows = {name: _record_qa(name, embedder) for name in ("xquad-es", "mlqa-es")}
    clinc_rows = _record_clinc(embedder)
    text_grid = []
    for sim, conf, weight in itertools.product(
        (0.78, 0.80, 0.82, 0.84, 0.86), (0.82, 0.84, 0.86, 0.88, 0.90, 0.92), (0.05, 0.10, 0.20)
    ):
        tuning = OfflineTuning(min_similarity=sim, min_confidence=conf, overlap_weight=weight)
        text_grid.append({"min_similarity": sim, "min_confidence": conf, "overlap_weight": weight,
                          **evaluate_text(tuning, qa_rows)})
    qa_grid = []
    for qa_sim, margin in itertools.product((0.84, 0.86, 0.88, 0.90, 0.92, 0.94), (0.0, 0.01, 0.02, 0.03, 0.05)):
        tuning = OfflineTuning(qa_min_similarity=qa_sim, qa_agreement_margin=margin)
        qa_grid.append({"qa_min_similarity": qa_sim, "qa_agreement_margin": margin,
                        **evaluate_clinc(tuning, clinc_rows)})
    return {"split": "dev", "text": text_grid, "qa": qa_grid}


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
