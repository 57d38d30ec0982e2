"""Two processes on one data directory (the admin app and ``python -m api``): what one trains, the other finds on
its next search, after an incremental and after a full retrain, without a restart (#16)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.base.locks import FileLock
from core.knowledge import sources
from core.knowledge.training import TrainingBusy
from tests.conftest import RETURNS, SHIPPING

ROOT = Path(__file__).resolve().parents[2]
BIKES = "Las bicicletas eléctricas se pueden devolver en un plazo de 14 días."
HELMETS = "Los cascos de montaña se entregan con visera desmontable y dos juegos de almohadillas."


class Worker:
    """A second process on the same data dir, answering one JSON command per line."""

    def __init__(self, data_dir: Path, env: dict | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.knowledge.worker", str(data_dir)], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})

    def send(self, **command) -> dict:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def ask(self, **command):
        answer = self.send(**command)
        if "error" in answer:
            raise AssertionError(f"the other process failed: {answer['error']}\n{answer['trace']}")
        return answer["ok"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


@pytest.fixture
def other(settings):
    worker = Worker(settings.data_dir)
    yield worker
    worker.close()


def test_a_running_process_finds_what_another_trained(rt, ctx, other):
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    rt.index.train(ctx)
    assert other.ask(op="search", tenant="acme", query="envíos a Canarias")[0] == "politicas/envios"

    sources.save(ctx, rt.store, "politicas/bicis", title="Bicicletas eléctricas", content=BIKES, language="es")
    rt.index.train(ctx)
    assert other.ask(op="search", tenant="acme", query="devolver bicicletas eléctricas")[0] == "politicas/bicis"

    rt.index.train(ctx, full=True)
    assert other.ask(op="search", tenant="acme", query="devolver bicicletas eléctricas")[0] == "politicas/bicis"
    assert other.ask(op="search", tenant="acme", query="envíos a Canarias")[0] == "politicas/envios"


def test_this_process_finds_what_a_running_process_trained(rt, ctx, other):
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    rt.index.train(ctx)
    assert rt.retriever.search(ctx, "envíos a Canarias").hits[0].path == "politicas/envios"
    other.ask(op="save", tenant="acme", path="productos/cascos", title="Cascos de montaña", content=HELMETS)
    other.ask(op="train", tenant="acme")
    assert rt.retriever.search(ctx, "cascos de montaña con visera").hits[0].path == "productos/cascos"
    other.ask(op="train", tenant="acme", full=True)
    assert rt.retriever.search(ctx, "cascos de montaña con visera").hits[0].path == "productos/cascos"
    # and what this process trains now keeps the other process's work (a stale index must not overwrite it)
    sources.save(ctx, rt.store, "politicas/bicis", title="Bicicletas eléctricas", content=BIKES, language="es")
    rt.index.train(ctx)
    assert other.ask(op="search", tenant="acme", query="cascos de montaña con visera")[0] == "productos/cascos"
    assert other.ask(op="search", tenant="acme", query="devolver bicicletas eléctricas")[0] == "politicas/bicis"


def _catalog(ctx, rt, n: int) -> None:
    for i in range(n):
        sources.save(ctx, rt.store, f"productos/p{i:03d}", title=f"Producto {i}",
                     content=f"El producto {i} pesa {i + 100} gramos. Se entrega en {i % 7 + 1} días.", language="es")
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")


def test_searches_during_a_full_retrain_in_another_process_never_fail(rt, ctx, other):
    _catalog(ctx, rt, 150)
    rt.index.batch_sources = 4  # many small batches: many writes for the searches to run into
    rt.index.train(ctx)
    result: dict = {}
    searching = threading.Thread(target=lambda: result.update(
        other.ask(op="searches", tenant="acme", query="envíos a Canarias", times=60)))
    searching.start()
    while searching.is_alive():
        rt.index.train(ctx, full=True)
    searching.join()
    assert result["errors"] == []
    assert set(result["found"]) == {"politicas/envios"}  # the source stayed findable all along


def test_a_second_training_waits_for_the_first_or_says_who_is_training(rt, ctx, other, settings):
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    lock = FileLock(settings.data_dir / "locks" / f"training-{ctx.tenant_id}.lock")
    with lock.exclusive(1, what="training acme"):
        refused = other.send(op="train", tenant="acme")
        assert refused["error"].startswith("TrainingBusy: A training of 'acme' is already running (process ")
        assert str(os.getpid()) in refused["error"]
        with pytest.raises(TrainingBusy):  # a thread of this process is refused alike
            rt.index.train(ctx)
    held = threading.Event()

    def hold_for_a_second() -> None:
        with lock.exclusive(1, what="training acme"):
            held.set()
            time.sleep(1.0)

    holder = threading.Thread(target=hold_for_a_second)
    holder.start()
    held.wait(5)
    started = time.monotonic()
    waited = other.ask(op="train", tenant="acme", wait=10)  # waits for the holder, then trains
    assert waited["trained_sources"] == 1 and time.monotonic() - started > 0.5
    holder.join()


def test_two_trainings_at_once_both_end_well(rt, ctx, other):
    _catalog(ctx, rt, 60)
    rt.index.batch_sources = 4
    answers: list = []
    racing = threading.Thread(target=lambda: answers.append(other.send(op="train", tenant="acme", full=True,
                                                                         wait=60)))
    racing.start()
    mine = rt.index.train(ctx, full=True, wait=60)
    racing.join()
    assert "error" not in answers[0], answers[0]
    assert mine.pending == answers[0]["ok"]["pending"] == 0
    assert rt.index.status(ctx)["vectors"] == rt.index.status(ctx)["chunks"] == rt.index.status(ctx)["keyword_docs"]
