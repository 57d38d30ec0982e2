"""One approval click in a process of its own (``tests/actions/test_cards_concurrency.py``): it opens its own runtime
on the shared data dir, says it is ready, waits for the start file (the barrier of every clicker), approves the card
as its customer and writes what the click answered to ``out`` as JSON."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from core.actions.http import HttpExecutor
from core.actions.model import OpSource
from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy.context import local_customer
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder


def click(data_dir: str, customer: str, card_id: str, ready: str, go: str, out: str, wait: float = 60.0) -> None:
    entered = time.monotonic()
    settings = load_settings({"COBERTURA_DATA_DIR": data_dir})
    http = HttpExecutor(settings)
    rt = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING, executors={OpSource.HTTP: http})
    try:
        ctx = local_customer(rt.store, "acme", customer)
        rt.store.query("SELECT 1")  # this process's connection is open before the start
        opened = time.monotonic() - entered
        Path(ready, str(os.getpid())).touch()
        deadline = time.monotonic() + wait
        while not Path(go).exists():
            if time.monotonic() > deadline:
                raise TimeoutError("the start file never appeared")
            time.sleep(0.002)
        started = time.time()
        decision = rt.actions.decide(ctx, card_id, True)
        finished = time.time()
        Path(out).write_text(json.dumps({"pid": os.getpid(), "body": decision.as_dict(), "outcome": decision.outcome,
                                         "repeated": decision.repeated, "started": started, "finished": finished,
                                         "open_s": opened}))
    finally:
        http.close()
        rt.close()
