"""Drive the admin app with Streamlit's AppTest as a signed-in user (no browser, no network)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.tenancy.context import authenticate
from core.tenancy.tenants import create_user
from pages import common

APP = Path(__file__).resolve().parent.parent / "app.py"
PASSWORD = "a long test password"


def signed_in(store, slug: str, role: str = "admin", email: str | None = None, timeout: float = 60) -> AppTest:
    """An AppTest of app.py whose session belongs to a ``role`` member of tenant ``slug`` (created if new)."""
    email = email or f"{role}@{slug}.test"
    create_user(store, slug, email, PASSWORD, role)
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state[common.SESSION_KEY] = authenticate(store, email, PASSWORD)
    at.session_state[common.TENANT_KEY] = slug
    return at


def run(at: AppTest) -> AppTest:
    """Run the page again (after a widget was set) and fail on any exception it showed."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame(at: AppTest, column: str):
    """The first table of the page with the column ``column`` (a pandas DataFrame)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def settle(at: AppTest, timeout: float = 60) -> AppTest:
    """Let the background jobs the page started (training, QA runs, uploads: ``pages.jobs``) go and end, then run the
    page again, as the browser's progress fragment does when it sees a job has ended. Page tests hold every job
    until this call (``tests/pages/conftest.py``), so the run that started a job always shows it running."""
    from pages import jobs

    registry = jobs.registry()
    if registry.hold is not None:
        registry.hold.set()
    registry.wait(timeout)
    if registry.hold is not None:
        registry.hold.clear()  # the next job is held again
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
