"""A second process on a test's data directory, driven over stdin/stdout (one JSON command per line).

Each command answers one JSON line: ``{"ok": ...}`` or ``{"error": "<type>: <message>"}``. The process opens its
own runtime (the hashing embedder, the test tuning), exactly as ``python -m api`` beside the admin app would; with
``COBERTURA_CHROMA_HOST``/``PORT`` in its environment, on that Chroma server.
"""
from __future__ import annotations

import json
import os
import sys
import traceback

from core.base.config import load_settings
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder


def main(data_dir: str) -> None:
    server = {name: value for name, value in os.environ.items()
              if name in ("COBERTURA_CHROMA_HOST", "COBERTURA_CHROMA_PORT")}
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": data_dir, **server}), embedder=HashEmbedder(),
                      tuning=TEST_TUNING)
    for line in sys.stdin:
        command = json.loads(line)
        try:
            ctx = local_operator(rt.store, command["tenant"])
            answer = run(rt, ctx, command)
            print(json.dumps({"ok": answer}), flush=True)
        except Exception as exc:  # reported to the test, which decides
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}), flush=True)
    rt.close()


def run(rt, ctx, command: dict):
    op = command["op"]
    if op == "search":
        return [hit.path for hit in rt.retriever.search(ctx, command["query"], k=command.get("k", 3)).hits]
    if op == "searches":  # many in a row: the paths of each first hit, errors counted
        found, errors = [], []
        for _ in range(command["times"]):
            try:
                hits = rt.retriever.search(ctx, command["query"], k=3).hits
                found.append(hits[0].path if hits else None)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        return {"found": found, "errors": errors}
    if op == "save":
        sources.save(ctx, rt.store, command["path"], title=command["title"], content=command["content"],
                     language=command.get("language", "es"))
        return True
    if op == "train":
        return rt.index.train(ctx, full=command.get("full", False), wait=command.get("wait", 0.0)).as_dict()
    raise ValueError(f"unknown op {op!r}")


if __name__ == "__main__":
    main(sys.argv[1])
