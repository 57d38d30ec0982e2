"""Loaders for ../shared/bench-data with its dev/test split rule (tune on dev, report on test)."""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path


def data_root() -> Path:
    """Where the evaluation data lives: $COBERTURA_BENCH_DATA, default ../shared/bench-data."""
    root = Path(os.environ.get("COBERTURA_BENCH_DATA",
                               Path(__file__).resolve().parent.parent.parent / "shared" / "bench-data"))
    if not root.exists():
        raise SystemExit(f"Benchmark data not found at {root}; set COBERTURA_BENCH_DATA to the bench-data folder.")
    return root


def bucket(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 100


def split_of(key: str) -> str:
    return "dev" if bucket(key) < 30 else "test"


def norm(s: str) -> str:
    return re.sub(r"\W+", " ", s.lower()).strip()


@dataclass
class RetrievalSet:
    """A knowledge base of paragraphs (one source each) and questions with their gold paragraph."""

    name: str
    kb_language: str
    question_language: str
    paragraphs: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (title, text)
    questions: list[tuple[str, str, str]] = field(default_factory=list)  # (id, question, gold path)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def _squad(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["data"]


def _from_squad(name: str, data: list[dict], split: str, key_of, kb_lang: str, q_lang: str,
                questions_from: list[dict] | None = None) -> RetrievalSet:
    out = RetrievalSet(name, kb_lang, q_lang)
    gold_of_id: dict[str, str] = {}
    for a, article in enumerate(data):
        if split_of(key_of(article)) != split:
            continue
        for p, paragraph in enumerate(article["paragraphs"]):
            path = f"{name}/{_slug(article['title'])}-{a}/{p}"
            out.paragraphs[path] = (article["title"].replace("_", " "), paragraph["context"])
            for qa in paragraph["qas"]:
                gold_of_id[qa["id"]] = path
                if questions_from is None:
                    out.questions.append((qa["id"], qa["question"], path))
    if questions_from is not None:  # parallel questions (same ids) asked against this KB
        for article in questions_from:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    if qa["id"] in gold_of_id:
                        out.questions.append((qa["id"], qa["question"], gold_of_id[qa["id"]]))
    return out


def load_retrieval(name: str, split: str) -> RetrievalSet:
    root = data_root() / "retrieval_qa"
    if name in ("xquad-es", "xquad-en", "xquad-en-es"):
        es = _squad(root / "xquad" / "xquad.es.json")
        en = _squad(root / "xquad" / "xquad.en.json")
        by_title = lambda article: article["title"]  # noqa: E731  (XQuAD titles are English in both files)
        if name == "xquad-es":
            return _from_squad(name, es, split, by_title, "es", "es")
        if name == "xquad-en":
            return _from_squad(name, en, split, by_title, "en", "en")
        return _from_squad(name, es, split, by_title, "es", "en", questions_from=en)
    if name == "mlqa-es":
        en_en = _squad(root / "mlqa" / "dev-context-en-question-en.json")
        title_of_id = {qa["id"]: art["title"] for art in en_en for p in art["paragraphs"] for qa in p["qas"]}
        es_es = _squad(root / "mlqa" / "dev-context-es-question-es.json")
        # the split unit is the article; its key is the English title of the article holding the same question
        key = lambda article: title_of_id[article["paragraphs"][0]["qas"][0]["id"]]  # noqa: E731
        return _from_squad(name, es_es, split, key, "es", "es")
    if name == "faquad-pt":
        data = _squad(root / "faquad" / "dataset.json")
        return _from_squad(name, data, split, lambda article: article["title"], "pt", "pt")
    raise SystemExit(f"Unknown dataset {name!r}; use one of {', '.join(RETRIEVAL_SETS)}.")


RETRIEVAL_SETS = ("xquad-es", "xquad-en", "mlqa-es", "faquad-pt", "xquad-en-es")
