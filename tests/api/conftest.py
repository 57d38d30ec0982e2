"""The widget's browser tests against the quick endpoint of ``tests/api/widget_page.py``: per module, one endpoint
(``served``) and one Chromium (``browser``); per test, a fresh tab on its demo page with the panel open (``page``)."""
from __future__ import annotations

import pytest

from tests.api.widget_page import demo_page, serving
from tests.browser import chromium


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("widget")) as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser, served):
    with demo_page(browser, served.url) as tab:
        yield tab
