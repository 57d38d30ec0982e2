"""Citation gate benchmark (A3): ``core.grounding.check`` on public hallucination data, with the
BASELINES.md token-overlap baseline computed side by side on the same items.

How an answer is built (the same way whatever the label, never looking at it): the response text as
written, with ``[[cite:k1]]`` appended to each of its claims (``split_claims``), and the knowledge
passage as the only evidence, ``Evidence({"k1": knowledge})``. HaluEval answers are short ("Arthur's
Magazine", "Delhi"), so the answer string alone is the claim: ``"Delhi [[cite:k1]]"``. The question is
not added: it would lend the answer words and relations it does not state, for right and hallucinated
answers alike. An answer "passes" when ``check(...).ok``.

- HaluEval QA (split key ``question``): right answers passed, hallucinated answers blocked, balanced
  accuracy; the baseline recomputed here, and BASELINES.md's published test numbers as the anchor.
- FaithDial audit and BEGIN (split key ``norm(knowledge)``): pass rate of attributable responses
  (entailment / "Fully attributable"), block rate of hallucinated / "Not fully attributable" ones;
  generic or uncooperative responses form separate buckets, reported only. ``no_claim_failed`` also
  counts responses whose claims are all exempt (a lone question is no answer, so not ``ok``).
- Latency of ``check`` (p50/p95 ms): every answer above; product-shaped answers (a greeting, a transition,
  6 claims from 6 cited paragraphs of up to 1,600 characters, a closing) with each text new to the gate,
  first with words the process has never stemmed ("cold"), then again ("warm", the steady state); and a
  number-dense worst case.

- Relevance (A3, strict relevance), ``relevance(split)``: a scripted model answers every question with the
  top retrieved sentence (the sentence of the first hit closest to the question by the embedder), cited; the
  KB is every other article (``bench.trust.half_kb``). The gate judges it with and without the question:
  in-KB answers passed (all, and those whose sentence holds the gold answer), out-of-KB answers withheld.
  XQuAD-es, FaQuAD-pt and English questions over the Spanish XQuAD KB (names are compared across languages).

Tune only on ``dev``; ``test`` is held out.
"""
from __future__ import annotations

import csv
import json
import re
import time

from bench.datasets import data_root, load_retrieval, norm, split_of
from bench.harness import percentiles
from core.base.language import content_words
from core.base.text import sentences
from core.grounding import claims, support as grounding
from core.grounding.gate import PASSING, Evidence, check, split_claims

ANCHOR = {"right_passed": 0.945, "hallucinated_blocked": 0.887, "balanced_accuracy": 0.916,
          "note": "BASELINES.md token overlap (threshold 1.0), HaluEval test split"}


def cite_every_claim(text: str, cid: str = "k1") -> str:
    """The text with ``[[cite:cid]]`` after each of its claims."""
    text = text.strip()
    for claim in reversed(split_claims(text)):
        text = f"{text[:claim.end]} [[cite:{cid}]]{text[claim.end:]}"
    return text


def token_overlap(answer: str, knowledge: str) -> float:
    """BASELINES.md's baseline: share of the answer's content words in the knowledge; 0 if a number is missing."""
    if not set(re.findall(r"\d+", answer)) <= set(re.findall(r"\d+", knowledge)):
        return 0.0
    words, known = content_words(answer, "en"), set(content_words(knowledge, "en"))
    return sum(w in known for w in words) / len(words) if words else 0.0


def _judge(answer: str, knowledge: str, latencies: list[float]) -> tuple[bool, bool]:
    """(ok, no claim failed) for a response turned into a cited answer."""
    started = time.perf_counter()
    verdict = check(cite_every_claim(answer), Evidence({"k1": knowledge}))
    latencies.append(time.perf_counter() - started)
    return verdict.ok, all(c.verdict in PASSING for c in verdict.claims)


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 3) if total else None


def halueval(split: str, latencies: list[float]) -> dict:
    path = data_root() / "grounding" / "halueval" / "qa_one-turn_data.jsonl"
    gate, base, n = [0, 0], [0, 0], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if split_of(row["question"]) != split:
            continue
        n += 1
        for k, (answer, passes) in enumerate(((row["right_answer"], True), (row["hallucinated_answer"], False))):
            gate[k] += _judge(answer, row["knowledge"], latencies)[0] is passes
            base[k] += (token_overlap(answer, row["knowledge"]) >= 1.0) is passes

    def rates(hits: list[int]) -> dict:
        right, blocked = hits[0] / n, hits[1] / n
        return {"right_passed": round(right, 3), "hallucinated_blocked": round(blocked, 3),
                "balanced_accuracy": round((right + blocked) / 2, 3)}

    return {"items": n, **rates(gate), "baseline_token_overlap": rates(base), "anchor": ANCHOR}


def _faithdial_bucket(labels: list[str]) -> str:
    if "hallucination" in labels or "partial hallucination" in labels:
        return "hallucination"
    if "entailment" in labels:
        return "attributable_uncooperative" if "uncooperative" in labels else "attributable"
    return "generic_or_uncooperative"


def _buckets(rows: list[tuple[str, str, str]], latencies: list[float]) -> dict:
    """rows of (bucket, knowledge, response) -> pass rates per bucket (block rates for the unsupported ones)."""
    counts: dict[str, list[int]] = {}
    for bucket, knowledge, response in rows:
        ok, clean = _judge(response, knowledge, latencies)
        tally = counts.setdefault(bucket, [0, 0, 0])
        tally[0], tally[1], tally[2] = tally[0] + ok, tally[1] + clean, tally[2] + 1
    out = {}
    for bucket, (ok, clean, n) in sorted(counts.items()):
        out[bucket] = {"n": n, "passed": _rate(ok, n), "no_claim_failed": _rate(clean, n)}
        if bucket in ("hallucination", "not_attributable"):
            out[bucket]["blocked"] = _rate(n - ok, n)
    return out


def faithdial(split: str, latencies: list[float]) -> dict:
    path = data_root() / "grounding" / "faithdial_audit" / "faithdial_audit.jsonl"
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if split_of(norm(row["knowledge"])) == split:
            rows.append((_faithdial_bucket(row["begin_labels"]), row["knowledge"], row["response"]))
    return _buckets(rows, latencies)


def begin(split: str, latencies: list[float]) -> dict:
    names = {"Fully attributable": "attributable", "Not fully attributable": "not_attributable", "Generic": "generic"}
    rows = []
    for path in sorted((data_root() / "grounding" / "begin").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                if split_of(norm(row["knowledge"])) == split:
                    rows.append((names.get(row["begin_label"], row["begin_label"]), row["knowledge"], row["response"]))
    return _buckets(rows, latencies)


def _fresh_check(answer: str, evidence: Evidence) -> float:
    """Seconds for one check with every per-text cache emptied (the word-stem memo is kept)."""
    for cache in (grounding.source_of, grounding.facts_of, claims._detect):
        cache.cache_clear()
    started = time.perf_counter()
    check(answer, evidence)
    return time.perf_counter() - started


def _product_answers(split: str) -> list[tuple[str, Evidence]]:
    framing = {"xquad-es": ("¡Hola! Esto es lo que encontré:", "Espero que te ayude."),
               "faquad-pt": ("Olá! Isto é o que encontrei:", "Espero ter ajudado.")}
    out = []
    for name, (opening, closing) in framing.items():
        paragraphs = [text[:1600] for _title, text in load_retrieval(name, split).paragraphs.values()]
        for start in range(0, len(paragraphs) - 5, 6):
            chunk = {f"{name}-{start + i}": paragraphs[start + i] for i in range(6)}
            claims = [sentences(text)[min(1, len(sentences(text)) - 1)] for text in chunk.values()]
            body = "\n".join(f"- {claim} [[cite:{cid}]]" for cid, claim in zip(chunk, claims))
            out.append((f"{opening}\n{body}\n{closing}", Evidence(chunk)))
    return out


def product_latency(split: str) -> dict:
    answers = _product_answers(split)
    cold = [_fresh_check(a, e) for a, e in answers]
    warm = [_fresh_check(a, e) for a, e in answers]
    dense = []
    for r in range(60):
        sources = {f"c{r}-{i}": " ".join(
            f"La tarifa {name} número {r}-{i}-{k} cuesta {10 + k},90 € al mes e incluye {k + 2} usuarios y soporte "
            f"por correo en {k + 1} días hábiles." for k, name in enumerate(
                "Básica Plus Pro Max Top Ultra Mega Giga Tera Peta Exa".split()))[:1600] for i in range(6)}
        answer = "¡Hola! Esto es lo que encontré:\n" + " ".join(
            f"La tarifa Pro número {r}-{i}-2 cuesta 12,90 € al mes e incluye 4 usuarios. [[cite:c{r}-{i}]]"
            for i in range(6)) + "\nEspero que te ayude."
        dense.append(_fresh_check(answer, Evidence(sources)))
    return {"product_6x6_cold": {"n": len(cold), **percentiles(cold)},
            "product_6x6_warm": {"n": len(warm), **percentiles(warm)},
            "number_dense_6x6": {"n": len(dense), **percentiles(dense)}}


def _top_sentence(embedder, question: str, text: str) -> str:
    parts = sentences(text) or [text]
    if len(parts) == 1:
        return parts[0]
    scores = embedder.passages(parts) @ embedder.queries([question])[0]
    return parts[int(scores.argmax())]


def _relevance_set(name: str, split: str, embedder) -> dict:
    from bench.trust import answers_of, half_kb

    rt, ctx, _kept, questions = half_kb(name, split, embedder)
    gold = answers_of(name, split) if name != "faquad-pt" else {}
    tally = {k: 0 for k in ("in_kb", "in_passed_before", "in_passed", "in_right", "in_right_passed_before",
                            "in_right_passed", "out_kb", "out_withheld_before", "out_withheld", "no_hit")}
    for qid, question, _path, in_kb in questions:
        hits = rt.retriever.search(ctx, question).hits
        if not hits:
            tally["no_hit"] += 1
            continue
        top = hits[0]
        answer = f"{_top_sentence(embedder, question, top.text)} [[cite:{top.chunk_id}]]"
        evidence = Evidence({h.chunk_id: h.text for h in hits}, about={h.chunk_id: f"{h.title} {h.path}" for h in hits})
        before, after = check(answer, evidence).ok, check(answer, evidence, question=question).ok
        right = any(a in answer for a in gold.get(qid, ()))
        if in_kb:
            for key, hit in (("in_kb", 1), ("in_passed_before", before), ("in_passed", after), ("in_right", right),
                             ("in_right_passed_before", right and before), ("in_right_passed", right and after)):
                tally[key] += hit
        else:
            tally["out_kb"] += 1
            tally["out_withheld_before"] += not before
            tally["out_withheld"] += not after
    rt.close()
    n_in, n_right, n_out = tally["in_kb"], tally["in_right"], tally["out_kb"]
    return {"questions_answered_by_the_script": n_in + n_out, "without_a_hit": tally["no_hit"],
            "in_kb": n_in, "in_kb_passed": {"without_question": _rate(tally["in_passed_before"], n_in),
                                            "with_question": _rate(tally["in_passed"], n_in)},
            "in_kb_right_sentence": n_right,
            "in_kb_right_passed": {"without_question": _rate(tally["in_right_passed_before"], n_right),
                                   "with_question": _rate(tally["in_right_passed"], n_right)},
            "out_of_kb": n_out, "out_of_kb_withheld": {"without_question": _rate(tally["out_withheld_before"], n_out),
                                                      "with_question": _rate(tally["out_withheld"], n_out)}}


def relevance(split: str) -> dict:
    """The scripted top-sentence model through the gate, with and without the question."""
    from bench.harness import cached_embedder

    embedder = cached_embedder(cache_queries=True)
    return {name: _relevance_set(name, split, embedder) for name in ("xquad-es", "faquad-pt", "xquad-en-es")}


def run(split: str) -> dict:
    """Gate quality on one split ('dev' to tune, 'test' to report) and its latency."""
    if split not in ("dev", "test"):
        raise ValueError("split must be 'dev' or 'test'")
    latencies: list[float] = []
    report = {"split": split, "thresholds": {"min_support": grounding.MIN_SUPPORT, "strict_upto": grounding.STRICT_UPTO,
                                             "pair_discount": grounding.PAIR_DISCOUNT,
                                             "contradiction": grounding.CONTRADICTION},
              "halueval": halueval(split, latencies), "faithdial": faithdial(split, latencies),
              "begin": begin(split, latencies)}
    report["latency"] = {"all_answers": {"n": len(latencies), **percentiles(latencies)}, **product_latency(split)}
    report["relevance"] = relevance(split)
    return report
