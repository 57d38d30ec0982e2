"""AppTest re-decides on every run whether Streamlit uses the legacy ``pages/`` navigation (a real server
decides once and turns it off at the first ``st.navigation`` of app.py). The page tests run as a server does
after its first run; the first-run case is tested against a real server (``test_direct_urls.py``)."""
import pytest
from streamlit.runtime.pages_manager import PagesManager


@pytest.fixture(autouse=True)
def navigation_as_after_the_first_run(monkeypatch):
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(autouse=True)
def held_jobs(monkeypatch):
    """The background jobs of the pages (``pages.jobs``) in a registry of the test's own, each held until the test
    calls ``tests.apptest.settle``: the run that starts a job always shows it running, never already ended."""
    import threading

    from pages import jobs

    registry = jobs.Jobs(hold=threading.Event())
    monkeypatch.setattr(jobs, "registry", lambda: registry)
    yield registry
    registry.hold.set()  # nothing is left waiting on a runtime the test closes
    registry.wait(60)
