from __future__ import annotations

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
