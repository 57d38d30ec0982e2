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
