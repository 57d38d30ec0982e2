"""PII masking benchmark (core.pii.mask) on presidio-research synth v2 (en) and MEDDOCAN (es).

A gold span counts as found when its raw value is no longer in the masked text (for a value that also
occurs elsewhere unmasked, that is the strict reading: every occurrence must be gone). Reported per
entity type: recall and the number of gold spans; for presidio synth also ``raw_left`` (gold values of
the four core types — e-mail, phone, card, IBAN — still present verbatim) and the number of
placeholders emitted vs gold spans. As a precision signal, the share of ordinary PII-free questions
(BANKING77 en, XQuAD es, FaQuAD pt) that masking changes at all. Timing per ``mask`` call. Tune on
dev only.

    python -m bench.pii --split dev|test
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time

from bench.datasets import data_root, load_retrieval, split_of
from core.gaps.pii import mask

SYNTH_TYPES = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS", "US_SSN", "PERSON")
CORE_TYPES = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE")
MEDDOCAN_LABELS = ("CORREO_ELECTRONICO", "NUMERO_TELEFONO", "NUMERO_FAX", "ID_SUJETO_ASISTENCIA", "ID_ASEGURAMIENTO",
                   "ID_CONTACTO_ASISTENCIAL", "ID_TITULACION_PERSONAL_SANITARIO", "NOMBRE_SUJETO_ASISTENCIA",
                   "NOMBRE_PERSONAL_SANITARIO")
PIECE = 2000  # the product masks questions of at most 2,000 characters


def pieces(text: str, limit: int = PIECE) -> list[str]:
    """Split on line breaks into pieces of at most ``limit`` characters (a longer line is cut hard)."""
    out, current = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:
            out, line = out + ([current] if current else []) + [line[:limit]], line[limit:]
            current = ""
        if len(current) + len(line) > limit:
            out.append(current)
            current = ""
        current += line
    return out + ([current] if current else [])


class Timer:
    def __init__(self):
        self.ms: list[float] = []

    def mask(self, text: str) -> str:
        t0 = time.perf_counter()
        masked = mask(text).text
        self.ms.append((time.perf_counter() - t0) * 1000)
        return masked


def _recall(found: dict[str, int], total: dict[str, int]) -> dict:
    return {t: {"recall": round(found[t] / total[t], 4) if total[t] else None, "gold": total[t]} for t in total}


def synth(split: str, timer: Timer) -> dict:
    items = json.loads((data_root() / "pii" / "presidio_synth" / "synth_dataset_v2.json").read_text(encoding="utf-8"))
    items = [item for item in items if split_of(str(item["template_id"])) == split]
    total, found, raw_left = dict.fromkeys(SYNTH_TYPES, 0), dict.fromkeys(SYNTH_TYPES, 0), 0
    placeholders = gold_spans = 0
    misses: dict[str, list[str]] = {t: [] for t in SYNTH_TYPES}
    for item in items:
        masked_text = timer.mask(item["full_text"])
        placeholders += masked_text.count("<") - item["full_text"].count("<")
        gold_spans += len(item["spans"])
        for span in item["spans"]:
            kind, value = span["entity_type"], span["entity_value"]
            if kind not in total:
                continue
            total[kind] += 1
            if value in masked_text:
                raw_left += kind in CORE_TYPES
                misses[kind].append(value)
            else:
                found[kind] += 1
    return {"sentences": len(items), "by_type": _recall(found, total), "raw_left_core": raw_left,
            "placeholders": placeholders, "gold_spans_all_types": gold_spans,
            "missed_examples": {t: v[:5] for t, v in misses.items() if v and split == "dev"}}


def meddocan(split: str, timer: Timer) -> dict:
    path = data_root() / "pii" / "meddocan" / f"{split}.jsonl"
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    total, found = dict.fromkeys(MEDDOCAN_LABELS, 0), dict.fromkeys(MEDDOCAN_LABELS, 0)
    misses: dict[str, list[str]] = {t: [] for t in MEDDOCAN_LABELS}
    for doc in docs:
        masked_text = "".join(timer.mask(piece) for piece in pieces(doc["text"]))
        for span in doc["spans"]:
            if span["label"] not in total:
                continue
            total[span["label"]] += 1
            if span["text"] in masked_text:
                misses[span["label"]].append(span["text"])
            else:
                found[span["label"]] += 1
    total = {k: v for k, v in total.items() if v}
    return {"documents": len(docs), "by_label": _recall(found, total),
            "missed_examples": {t: v[:5] for t, v in misses.items() if v and split == "dev"}}


def ordinary_questions(split: str, timer: Timer) -> dict:
    """Questions without personal data (BANKING77 en, XQuAD es, FaQuAD pt): how many does masking change?"""
    root = data_root()
    banking = root / "paraphrase" / "banking77" / ("train.csv" if split == "dev" else "test.csv")  # official split
    with open(banking, encoding="utf-8") as f:
        sets = {"banking77-en": [row["text"] for row in csv.DictReader(f)]}
    for name in ("xquad-es", "faquad-pt"):
        sets[name] = [question for _, question, _ in load_retrieval(name, split).questions]
    report = {}
    for name, questions in sets.items():
        changed = [(q, m) for q in questions if (m := timer.mask(q)) != q]
        report[name] = {"questions": len(questions), "changed": len(changed),
                        "changed_rate": round(len(changed) / len(questions), 4),
                        **({"changed_examples": [m for _, m in changed[:12]]} if split == "dev" else {})}
    return report


def evaluate(split: str) -> dict:
    if split not in ("dev", "test"):
        raise ValueError("split must be dev or test")
    mask("warm-up")  # builds the engines once (presidio imports spaCy), not counted in the timings
    timer = Timer()
    report = {"split": split, "presidio_synth": synth(split, timer), "meddocan": meddocan(split, timer),
              "ordinary_questions": ordinary_questions(split, timer)}
    cuts = statistics.quantiles(timer.ms, n=100)
    report["ms_per_mask"] = {"calls": len(timer.ms), "mean": round(statistics.fmean(timer.ms), 3),
                             "p50": round(cuts[49], 3), "p95": round(cuts[94], 3), "max": round(max(timer.ms), 3)}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pii")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    args = parser.parse_args(argv)
    json.dump(evaluate(args.split), sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
