"""Docs benchmark: the agent on real documents nobody on the project wrote (``python -m bench docs``).

The documents live in ``bench/docs/`` (FAQs, READMEs, markdown, HTML, man pages and PDFs that ship with Debian
packages or Python wheels; origins and licenses in ``bench/docs/SOURCES.md``) with their questions in
``bench/docs/questions.jsonl``. A document's questions all belong to the split chosen by a hash of its file name
(``doc_split``), so dev and test use different documents; uncovered questions (``doc`` null) split by a hash of
their id.

For a split: one tenant in a throw-away data dir, the split's documents imported through the product's own file
import (``import_paths``, prefix ``docs``) and trained, then every question asked through the turn pipeline with
the offline responder. A covered question is *answered right* when the turn answered, cited its document and the
answer contains one of its facts (case-insensitive, whitespace collapsed, markdown's inline marks ignored on both
sides; ``answered_right_strict`` counts the right answers that match without ignoring them); an uncovered one is
*refused* when the turn did not answer. Each failure says whether its fact survived the import (``fact_in_import``):
when it did not, the extraction lost the answer before retrieval could find it. ``--check`` only validates the
dataset (every fact is in its document's text, splits follow the hash rule, field values are known) and needs no
embedder.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent / "docs"
QUESTIONS = DOCS_DIR / "questions.jsonl"
SHAPES = ("plain-faq", "plain", "markdown", "html", "man", "pdf")
LANGUAGES = ("en", "es", "pt")
FIELDS = {"id", "doc", "question", "language", "facts", "split", "shape"}
NOT_DOCUMENTS = {"questions.jsonl", "SOURCES.md"}
PREFIX = "docs"


def _third(key: str) -> str:
    """'test' for about a third of the keys (sha256 mod 3 == 0), 'dev' for the rest."""
    return "test" if int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 3 == 0 else "dev"


def doc_split(name: str) -> str:
    return _third(name)


def question_split(qid: str) -> str:
    return _third(qid)


def shape_of(name: str) -> str:
    """The document's shape from its name: faq-*.txt, readme-*.txt, *.md, *.html, man-*.txt, *.pdf."""
    suffix = Path(name).suffix.lower()
    if suffix == ".pdf":
        return "pdf"
    if suffix in (".html", ".htm"):
        return "html"
    if suffix in (".md", ".markdown"):
        return "markdown"
    if name.startswith("man-"):
        return "man"
    return "plain-faq" if name.startswith("faq-") else "plain"


def collapse(text: str) -> str:
    """Lower case, whitespace collapsed, and markdown's inline marks dropped (code spans, bold, backslash escapes):
    an answer rendered as markdown shows ``Z_DATA_ERROR`` whether its text says `Z_DATA_ERROR` or Z\\_DATA\\_ERROR."""
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", text).replace("`", "").replace("**", "")
    return " ".join(text.split()).lower()


def collapse_strict(text: str) -> str:
    return " ".join(text.split()).lower()


def has_fact(text: str, facts: list[str], flatten=collapse) -> bool:
    flat = flatten(text)
    return any(flatten(f) in flat for f in facts)


def documents(split: str | None = None) -> list[str]:
    names = sorted(p.name for p in DOCS_DIR.iterdir() if p.is_file() and p.name not in NOT_DOCUMENTS)
    return [n for n in names if split is None or doc_split(n) == split]


def load_questions(split: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in rows if split is None or q["split"] == split]


def raw_text(name: str) -> str:
    """A document's whole text, independent of the product's extraction (html-text keeps every element)."""
    path = DOCS_DIR / name
    if path.suffix == ".pdf":
        from pypdf import PdfReader

        return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        import html_text

        return html_text.extract_text(text)
    return text


def _question_problems(q: dict, names: set[str], texts: dict[str, str]) -> list[str]:
    out = []
    if set(q) != FIELDS:
        out.append(f"fields {sorted(set(q) ^ FIELDS)}")
    if q.get("language") not in LANGUAGES:
        out.append(f"language {q.get('language')!r}")
    doc = q.get("doc")
    if doc is None:
        if q.get("facts"):
            out.append("uncovered question with facts")
        if q.get("split") != question_split(q["id"]):
            out.append("split does not follow the hash of the id")
        return out
    if doc not in names:
        return out + [f"unknown document {doc!r}"]
    if q.get("split") != doc_split(doc):
        out.append("split does not follow the hash of the document name")
    if q.get("shape") != shape_of(doc):
        out.append(f"shape {q.get('shape')!r}, expected {shape_of(doc)!r}")
    if not q.get("facts"):
        out.append("covered question without facts")
    out += [f"fact not in the document: {f!r}" for f in q.get("facts", []) if not has_fact(texts[doc], [f])]
    return out


def check() -> dict:
    """Dataset validation: problems by question id (empty when the dataset is consistent)."""
    names = set(documents())
    texts = {n: raw_text(n) for n in names}
    questions = load_questions()
    problems = {q.get("id", "?"): p for q in questions if (p := _question_problems(q, names, texts))}
    ids = Counter(q.get("id") for q in questions)
    problems.update({qid: ["duplicate id"] for qid, n in ids.items() if n > 1})
    unused = sorted(names - {q["doc"] for q in questions if q.get("doc")})
    counts = Counter((q["split"], q["shape"] or "uncovered", q["language"]) for q in questions)
    return {"documents": {n: {"shape": shape_of(n), "split": doc_split(n)} for n in sorted(names)},
            "documents_without_questions": unused, "questions": len(questions),
            "counts": {"/".join(k): v for k, v in sorted(counts.items())}, "problems": problems}


def _import(ctx, store, names: list[str]) -> tuple[dict[str, str], list[dict]]:
    """Each document through the product's file import; its source path by file name, and the import errors."""
    from core.knowledge.ingest import import_paths

    mapping, errors = {}, []
    for name in names:
        report = import_paths(ctx, store, [DOCS_DIR / name], prefix=PREFIX)
        errors += report.errors
        if report.saved:
            mapping[name] = report.saved[0]
    return mapping, errors


def _verdict(q: dict, result, doc_path: str | None) -> str:
    answered = str(result.status) == "answered"
    if q["doc"] is None:
        return "answered_uncovered" if answered else "refused_uncovered"
    if not answered:
        return "refused_covered"
    if doc_path not in {c.get("path") for c in result.citations}:
        return "answered_wrong_source"
    return "answered_right" if has_fact(result.answer, q["facts"]) else "answered_without_fact"


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _breakdown(rows: list[dict], key: str) -> dict:
    groups = defaultdict(list)
    for row in rows:
        if row["doc"] is not None:
            groups[row[key]].append(row["verdict"] == "answered_right")
    return {k: {"covered": len(v), "answered_right": sum(v), "rate": _rate(sum(v), len(v))}
            for k, v in sorted(groups.items())}


def summarize(rows: list[dict]) -> dict:
    verdicts = Counter(r["verdict"] for r in rows)
    covered = sum(1 for r in rows if r["doc"] is not None)
    uncovered = len(rows) - covered
    counts = {"covered": covered, "answered_right": verdicts["answered_right"],
              "answered_wrong_source": verdicts["answered_wrong_source"],
              "answered_without_fact": verdicts["answered_without_fact"],
              "refused_covered": verdicts["refused_covered"], "uncovered": uncovered,
              "refused_uncovered": verdicts["refused_uncovered"]}
    # the brief's literal rule (whitespace collapsed only, markdown marks kept): right answers it would still count
    counts["answered_right_strict"] = sum(1 for r in rows if r["verdict"] == "answered_right" and r["strict_fact"])
    counts["rates"] = {"answered_right": _rate(counts["answered_right"], covered),
                       "answered_wrong_source": _rate(counts["answered_wrong_source"], covered),
                       "answered_without_fact": _rate(counts["answered_without_fact"], covered),
                       "refused_covered": _rate(counts["refused_covered"], covered),
                       "refused_uncovered": _rate(counts["refused_uncovered"], uncovered)}
    counts["statuses"] = dict(Counter(f"{'covered' if r['doc'] else 'uncovered'}:{r['status']}" for r in rows))
    return counts


def _row(q: dict, result, doc_path: str | None, source_text: str | None, seconds: float) -> dict:
    return {"id": q["id"], "doc": q["doc"], "shape": q["shape"], "language": q["language"],
            "question": q["question"], "status": str(result.status), "verdict": _verdict(q, result, doc_path),
            "answer": result.answer[:200], "cited": sorted({c.get("path") for c in result.citations}),
            "fact_in_import": None if source_text is None else has_fact(source_text, q["facts"]),
            "strict_fact": has_fact(result.answer, q["facts"], collapse_strict) if q["facts"] else None,
            "seconds": seconds}


def _ask_all(rt, ctx, questions: list[dict], mapping: dict[str, str]) -> list[dict]:
    from core.agent.loop import Agent
    from core.agent.providers.offline import OfflineResponder
    from core.knowledge import sources

    agent = Agent(rt, OfflineResponder())
    texts = {name: (s.content if (s := sources.get(ctx, rt.store, path)) else "") for name, path in mapping.items()}
    rows = []
    for q in questions:
        started = time.perf_counter()
        result = rt.turns.run(ctx, agent, q["question"], channel="web")
        rows.append(_row(q, result, mapping.get(q["doc"]), texts.get(q["doc"]), time.perf_counter() - started))
    return rows


def code_fingerprint() -> dict:
    """The commit and a hash of the working tree's core/ sources: other people edit core/ while benchmarks run."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted((root / "core").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    head = root / ".git" / "HEAD"
    ref = head.read_text().strip() if head.is_file() else ""
    if ref.startswith("ref: "):
        loose, packed = root / ".git" / ref[5:], root / ".git" / "packed-refs"
        lines = packed.read_text().splitlines() if packed.is_file() else []
        ref = loose.read_text().strip() if loose.is_file() else next(
            (line.split()[0] for line in lines if line.endswith(" " + ref[5:])), "")
    return {"commit": ref or None, "core_sha256": digest.hexdigest()[:16]}


def run(split: str) -> dict:
    from bench.harness import cached_embedder, percentiles, scratch_settings
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    started = time.perf_counter()
    names, questions = documents(split), load_questions(split)
    rt = open_runtime(scratch_settings("docs"), embedder=cached_embedder(cache_queries=True))
    create_tenant(rt.store, "bench")
    ctx = local_operator(rt.store, "bench")
    mapping, errors = _import(ctx, rt.store, names)
    print("documents -> source paths: " + json.dumps(mapping, indent=1), file=sys.stderr)
    train = rt.index.train(ctx)
    trained = time.perf_counter()
    rows = _ask_all(rt, ctx, questions, mapping)
    rt.close()
    failures = [{k: r[k] for k in ("id", "doc", "verdict", "question", "status", "answer", "cited", "fact_in_import")}
                for r in rows if r["verdict"] not in ("answered_right", "refused_uncovered")]
    return {"split": split, "responder": "offline", "code": code_fingerprint(),
            "documents": {n: {"shape": shape_of(n), "path": mapping.get(n)} for n in names},
            "import_errors": errors, "train": train.as_dict(), split: summarize(rows),
            "per_shape": _breakdown(rows, "shape"), "per_language": _breakdown(rows, "language"),
            "per_document": _breakdown(rows, "doc"),
            "facts_missing_from_import": sorted(r["id"] for r in rows if r["fact_in_import"] is False),
            "turn_latency": percentiles([r["seconds"] for r in rows]),
            "seconds": {"import_and_train": round(trained - started, 1),
                        "total": round(time.perf_counter() - started, 1)},
            "failures": failures}


def register(sub, argv: list[str] | None) -> None:
    """Add ``docs`` to ``python -m bench``; when it is the command, run it here, print JSON and exit."""
    p = sub.add_parser("docs", help="the agent on real documents shipped with Debian and Python packages")
    p.add_argument("--split", choices=["dev", "test"], default="dev")
    p.add_argument("--check", action="store_true", help="only validate bench/docs/questions.jsonl (no embedder)")
    p.add_argument("--json", action="store_true", help="(output is always JSON)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["docs"]:
        return
    args = p.parse_args(argv[1:])
    report = check() if args.check else run(args.split)
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    print()
    raise SystemExit(1 if args.check and report["problems"] else 0)


if __name__ == "__main__":
    register(argparse.ArgumentParser(prog="python -m bench.docs").add_subparsers(), ["docs", *sys.argv[1:]])
