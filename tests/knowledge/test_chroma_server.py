"""The scale-out path: vectors on a real Chroma server (``chroma run`` on loopback) through ``HttpClient``; two
processes train and search through it (#16)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from core.base.config import load_settings
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.conftest import RETURNS, SHIPPING, TEST_TUNING
from tests.fakes import HashEmbedder
from tests.knowledge.test_shared_data_dir import BIKES, HELMETS, Worker
from tests.servers import free_port, wait_until_up


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen([sys.executable, "-c", "from chromadb.cli.cli import app; app()", "run", "--path",
                             str(path), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_up(proc, f"http://127.0.0.1:{port}/api/v2/heartbeat", 60, "chroma run")
    yield {"COBERTURA_CHROMA_HOST": "127.0.0.1", "COBERTURA_CHROMA_PORT": str(port)}
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture
def served(tmp_path, chroma_server):
    settings = load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data"), **chroma_server})
    runtime = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING)
    yield runtime
    runtime.close()


def test_training_and_search_through_a_chroma_server(served, chroma_server, tmp_path):
    assert not served.index.vectors.shared.embedded  # really the HttpClient
    create_tenant(served.store, "acme", "Acme")
    ctx = local_operator(served.store, "acme")
    sources.save(ctx, served.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, served.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    served.index.train(ctx)
    assert served.retriever.search(ctx, "envíos a Canarias").hits[0].path == "politicas/envios"
    assert not (tmp_path / "data" / "chroma").exists()  # nothing embedded beside the server

    other = Worker(tmp_path / "data", env=chroma_server)
    try:
        sources.save(ctx, served.store, "politicas/bicis", title="Bicicletas eléctricas", content=BIKES,
                     language="es")
        served.index.train(ctx)
        assert other.ask(op="search", tenant="acme", query="devolver bicicletas eléctricas")[0] == "politicas/bicis"
        other.ask(op="save", tenant="acme", path="productos/cascos", title="Cascos de montaña", content=HELMETS)
        other.ask(op="train", tenant="acme", full=True)
        assert served.retriever.search(ctx, "cascos de montaña con visera").hits[0].path == "productos/cascos"
        status = served.index.status(ctx)
        assert status["vectors"] == status["chunks"] == 4
    finally:
        other.close()
