"""The default deployment, as two real processes on one data dir: a running ``python -m api`` answers from what the
CLI (or the admin app) trained a moment ago, after an incremental and after a ``--full`` retrain, without a restart
(#16). The real embedder and the offline responder, as a new user runs them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from core.base.store import Store
from core.tenancy import site_keys
from core.tenancy.context import local_operator
from tests.servers import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
RENTAL = ("# Alquiler de bicicletas\n\nEl alquiler de una bicicleta de montaña cuesta 35 € al día, con casco "
          "incluido.\n")
QUESTION = "¿Cuánto cuesta alquilar una bicicleta de montaña al día?"



def _cli(env: dict, *argv: str) -> str:
    done = subprocess.run([sys.executable, "-m", "core", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _events(body: str) -> dict[str, list[dict]]:
    events: dict[str, list[dict]] = {}
    name = ""
    for line in body.splitlines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name:
            events.setdefault(name, []).append(json.loads(line.split(":", 1)[1]))
    return events


@pytest.fixture
def endpoint(tmp_path):
    env = {**os.environ, "COBERTURA_DATA_DIR": str(tmp_path / "data"), "COBERTURA_API_PORT": str(free_port()),
           "COBERTURA_RATE_PER_IP": "1000"}
    _cli(env, "init")
    store = Store(tmp_path / "data" / "cobertura.db")
    key = site_keys.ensure(local_operator(store, "demo"), store).public_key
    store.close()
    proc = subprocess.Popen([sys.executable, "-m", "api"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{env['COBERTURA_API_PORT']}"
    wait_until_up(proc, f"{base}/v1/health", 120, "python -m api")
    yield env, base, key
    proc.terminate()
    proc.wait(timeout=30)


def _ask(base: str, key: str) -> dict[str, list[dict]]:
    reply = httpx.post(f"{base}/v1/chat", json={"message": QUESTION}, headers={"X-Site-Key": key}, timeout=120)
    assert reply.status_code == 200, reply.text
    return _events(reply.text)


def test_the_running_endpoint_answers_from_what_another_process_trained(endpoint, tmp_path):
    env, base, key = endpoint
    assert _ask(base, key)["done"][0]["status"] != "answered"  # not in the knowledge yet
    (tmp_path / "alquiler.md").write_text(RENTAL, encoding="utf-8")
    _cli(env, "ingest", "demo", str(tmp_path / "alquiler.md"), "--prefix", "servicios")
    _cli(env, "train", "demo")
    for label in ("after an incremental training", "after a full retrain"):
        events = _ask(base, key)
        assert events["done"][0]["status"] == "answered", (label, events)
        assert "35 €" in "".join(e["d"] for e in events["text"]), label
        assert [c["path"] for c in events["citations"][0]["items"]] == ["servicios/alquiler"], label
        _cli(env, "train", "demo", "--full")
