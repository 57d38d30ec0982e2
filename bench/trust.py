"""Trust benchmark: does the agent answer what the knowledge covers (citing the right chunk) and
abstain on what it does not? Runs the real agent (offline responder, the gate) end to end.

- XQuAD-es and MLQA-es: the KB is every other article of the split; in-KB questions must be answered
  with a cited chunk that contains the gold answer; out-of-KB questions must be refused (abstained, or answered
  as ``partial``: the answer says first that the point is not covered). XQuAD-en-es: the English questions on
  the same Spanish KB.
- SQuAD-es v2.0: near misses. The KB is every paragraph of the split's articles; answerable questions must
  be answered citing their answer, the unanswerable ones (same topic, a detail the text does not give) refused.
- CLINC150: the KB is the training utterances of the in-scope intents as Q&A pairs whose answer names
  the intent; in-scope questions must be answered with the right intent, out-of-scope ones refused.
- A generated product catalog (bench/catalog.py): sheets that differ only by code and figures.
- Injection (bench/injection.py): BIPIA payloads planted in paragraphs, web pages and Q&A answers.
- The gate alone on HaluEval / FaithDial / BEGIN and its relevance test (bench/gate.py), and its latency.
"""
from __future__ import annotations

import json
import time

from bench.datasets import RetrievalSet, data_root, load_retrieval, split_of
from bench.harness import cached_embedder, percentiles, scratch_settings
from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant

#: what counts as refusing a question: abstaining, or answering it as partial (the point asked is not covered)
REFUSED = ("abstained", "partial")


def _tenant(name: str, embedder):
    rt = open_runtime(scratch_settings(name), embedder=embedder)
    create_tenant(rt.store, "bench")
    return rt, local_operator(rt.store, "bench")


def split_kb(rs: RetrievalSet) -> tuple[set[str], list[tuple[str, str, str, bool]]]:
    """Every other article goes into the KB; questions are marked in-KB or not."""
    articles = sorted({path.rsplit("/", 1)[0] for path in rs.paragraphs})
    kept = {a for i, a in enumerate(articles) if i % 2 == 0}
    questions = [(qid, q, gold, gold.rsplit("/", 1)[0] in kept) for qid, q, gold in rs.questions]
    return kept, questions


def answers_of(name: str, split: str) -> dict[str, list[str]]:
    """Gold answer strings by question id (for 'the cited chunk contains the answer')."""
    root = data_root() / "retrieval_qa"
    path = {"xquad-es": root / "xquad" / "xquad.es.json", "xquad-en-es": root / "xquad" / "xquad.es.json",
            "mlqa-es": root / "mlqa" / "dev-context-es-question-es.json"}[name]
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return {qa["id"]: [a["text"] for a in qa["answers"]] for art in data for p in art["paragraphs"] for qa in p["qas"]}


def half_kb(name: str, split: str, embedder):
    """A trained tenant holding every other article of the set; the questions marked in-KB or not."""
    rs = load_retrieval(name, split)
    kept, questions = split_kb(rs)
    rt, ctx = _tenant(f"trust-{name}", embedder)
    for path, (title, text) in rs.paragraphs.items():
        if path.rsplit("/", 1)[0] in kept:
            sources.save(ctx, rt.store, path, title=title, content=text, type="text", language=rs.kb_language)
    rt.index.train(ctx)
    return rt, ctx, kept, questions


def clinc_kb(train: list[tuple[str, str]], embedder):
    """A trained tenant whose Q&A pairs are the training utterances, each answered with its intent."""
    rt, ctx = _tenant("trust-clinc", embedder)
    rt.index.batch_sources = 1000
    with rt.store.write():
        for n, (utterance, intent) in enumerate(train):
            sources.save(ctx, rt.store, f"clinc/{intent}/{n}", title=utterance, content=intent_answer(intent),
                         type="qa", language="en")
    rt.index.train(ctx)
    return rt, ctx


def run_qa_set(name: str, split: str, embedder, tuning: OfflineTuning | None = None) -> dict:
    rt, ctx, kept, questions = half_kb(name, split, embedder)
    agent = Agent(rt, OfflineResponder(tuning))
    gold = answers_of(name, split)
    counts = {"in_kb": 0, "in_answered": 0, "in_correct": 0, "in_partial": 0, "out_kb": 0, "out_abstained": 0,
              "out_partial": 0}
    gate_ms = []
    for qid, question, _path, in_kb in questions:
        result = rt.turns.run(ctx, agent, question, channel="web")
        answered = result.status == "answered"
        gate_ms.append(result.trace.latency_ms / 1000)
        if in_kb:
            counts["in_kb"] += 1
            counts["in_answered"] += answered
            counts["in_partial"] += result.status == "partial"
            cited = rt.index.chunks(ctx, [c["id"] for c in result.citations])
            counts["in_correct"] += answered and any(a in c.text for c in cited.values() for a in gold[qid])
        else:
            counts["out_kb"] += 1
            # a partial answer says first that the point is not covered, and leaves a gap: a refusal of the point
            counts["out_abstained"] += result.status in REFUSED
            counts["out_partial"] += result.status == "partial"
    rt.close()
    return {
        "kb_articles": len(kept), "in_kb_questions": counts["in_kb"], "out_of_kb_questions": counts["out_kb"],
        "in_kb_answered": round(counts["in_answered"] / max(counts["in_kb"], 1), 3),
        "in_kb_correct_citation": round(counts["in_correct"] / max(counts["in_kb"], 1), 3),
        "out_of_kb_abstained": round(counts["out_abstained"] / max(counts["out_kb"], 1), 3),
        "in_kb_partial": round(counts["in_partial"] / max(counts["in_kb"], 1), 3),
        "out_of_kb_partial": round(counts["out_partial"] / max(counts["out_kb"], 1), 3),
        "turn_latency": percentiles(gate_ms),
    }


def squad2_es(split: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, list[str]]]]:
    """SQuAD-es v2.0 (small dev file): the split's articles' paragraphs, and their questions with the gold
    answers (empty for the unanswerable ones, written to look answerable from the same paragraph)."""
    root = data_root() / "retrieval_qa" / "squad_es_v2"
    title_map = json.loads((root / "title_map_es_en.json").read_text(encoding="utf-8"))
    data = json.loads((root / "dev-v2.0-es_small.json").read_text(encoding="utf-8"))["data"]
    paragraphs, questions = {}, []
    for a, article in enumerate(data):
        if split_of(title_map[article["title"]]) != split:
            continue
        for p, paragraph in enumerate(article["paragraphs"]):
            paragraphs[f"squad2/{a}/{p}"] = (article["title"].replace("_", " "), paragraph["context"])
            questions += [(qa["question"], f"squad2/{a}/{p}",
                           [] if qa.get("is_impossible") else [x["text"] for x in qa["answers"]])
                          for qa in paragraph["qas"]]
    return paragraphs, questions


def run_squad2(split: str, embedder, tuning: OfflineTuning | None = None) -> dict:
    """Near misses: the KB is every paragraph of the split's articles; an answerable question must be answered
    citing a chunk with its answer, an unanswerable one (same topic, a detail the text does not give) refused."""
    paragraphs, questions = squad2_es(split)
    rt, ctx = _tenant("trust-squad2", embedder)
    with rt.store.write():
        for path, (title, text) in paragraphs.items():
            sources.save(ctx, rt.store, path, title=title, content=text, type="text", language="es")
    rt.index.train(ctx)
    agent = Agent(rt, OfflineResponder(tuning))
    counts = {"answerable": 0, "correct": 0, "unanswerable": 0, "refused": 0, "partial": 0}
    for question, _path, gold in questions:
        result = rt.turns.run(ctx, agent, question, channel="web")
        if gold:
            counts["answerable"] += 1
            cited = rt.index.chunks(ctx, [c["id"] for c in result.citations])
            counts["correct"] += result.status == "answered" and any(g in c.text for c in cited.values() for g in gold)
        else:
            counts["unanswerable"] += 1
            counts["refused"] += result.status in REFUSED
            counts["partial"] += result.status == "partial"
    rt.close()
    return {"paragraphs": len(paragraphs), "answerable": counts["answerable"], "unanswerable": counts["unanswerable"],
            "answerable_correct_citation": round(counts["correct"] / max(counts["answerable"], 1), 3),
            "unanswerable_refused": round(counts["refused"] / max(counts["unanswerable"], 1), 3),
            "unanswerable_partial": round(counts["partial"] / max(counts["unanswerable"], 1), 3)}


def clinc(split: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    data = json.loads((data_root() / "abstention" / "clinc150" / "data_full.json").read_text(encoding="utf-8"))
    train = [(u, i) for u, i in data["train"]]
    # dev refuses on oos_train too: oos_val's 100 questions alone set a threshold too noisy to trust
    evaluation = (data["val"] + data["oos_val"] + data["oos_train"] if split == "dev"
                  else data["test"] + data["oos_test"])
    return train, [(u, i) for u, i in evaluation]


def intent_answer(intent: str) -> str:
    return f"This request is about {intent.replace('_', ' ')}."


def run_clinc(split: str, embedder, tuning: OfflineTuning | None = None, limit: int | None = None) -> dict:
    train, evaluation = clinc(split)
    rt, ctx = clinc_kb(train, embedder)
    agent = Agent(rt, OfflineResponder(tuning))
    items = evaluation if limit is None else evaluation[:limit]
    in_total = in_right = oos_total = oos_refused = 0
    for utterance, intent in items:
        result = rt.turns.run(ctx, agent, utterance, channel="web")
        if intent == "oos":
            oos_total += 1
            oos_refused += result.status in REFUSED
        else:
            in_total += 1
            in_right += result.status == "answered" and any(c["path"].split("/")[1] == intent for c in result.citations)
    rt.close()
    return {"in_scope_questions": in_total, "oos_questions": oos_total,
            "in_scope_accuracy": round(in_right / max(in_total, 1), 3),
            "oos_recall": round(oos_refused / max(oos_total, 1), 3)}


def run(split: str) -> dict:
    embedder = cached_embedder(cache_queries=True)
    started = time.perf_counter()
    report = {"split": split, "responder": "offline", "xquad-es": run_qa_set("xquad-es", split, embedder),
              "xquad-en-es": run_qa_set("xquad-en-es", split, embedder),
              "mlqa-es": run_qa_set("mlqa-es", split, embedder), "clinc150": run_clinc(split, embedder),
              "squad2-es": run_squad2(split, embedder)}
    from bench.catalog import run as run_catalog
    from bench.gate import run as run_gate
    from bench.injection import run as run_injection

    report["catalog"] = run_catalog(split)
    report["injection"] = run_injection(split)
    report["gate"] = run_gate(split)
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report
