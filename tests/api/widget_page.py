"""A real public endpoint for the widget's browser tests, quick to start: the app (``create_app``) behind uvicorn
on a loopback port in a thread, over a runtime with the hashing embedder and a small tenant ``acme`` whose demo
page (/demo, in Spanish) carries its site key. Each turn's provider comes from ``script`` (a queue a test fills
with ScriptedProviders), the offline responder when it is empty. ``sse()`` writes a stream for a mocked
/v1/chat (``page.route``), ``ask()`` asks through the panel and waits for the turn to finish. The fixtures
``served``, ``browser`` and ``page`` over them are in ``tests/api/conftest.py``."""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field

from api import create_app
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.base.config import load_settings
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy import site_keys
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder
from tests.servers import in_thread

LENIENT = OfflineTuning(min_similarity=0.2, min_confidence=0.2)
RETURN_ES = ("Sigue estos pasos: entra en **tu cuenta** y abre el pedido. Pulsa `Devolver` y elige el motivo. "
             "Imprime la etiqueta en [la página de devoluciones](https://tienda.example/devoluciones). Guarda el "
             'código <img src=x onerror="window.__pwned=1"> que recibirás.')
RETURN_EN = ("Follow these steps: sign in to **your account** and open the order. Press `Return` and pick a reason. "
             "Print the label from [the returns page](https://shop.example/returns).")


@dataclass
class Served:
    url: str
    rt: object
    key: str
    script: list = field(default_factory=list)


@contextmanager
def serving(tmp_dir):
    """The endpoint over a fresh data dir in ``tmp_dir``; yields a Served."""
    env = {"COBERTURA_DATA_DIR": str(tmp_dir / "data"), "COBERTURA_DEMO_TENANT": "acme",
           "COBERTURA_RATE_PER_IP": "10000", "COBERTURA_RATE_PER_KEY": "10000"}
    rt = open_runtime(load_settings(env), embedder=HashEmbedder(), tuning=TEST_TUNING)
    create_tenant(rt.store, "acme", "Acme")
    ctx = local_operator(rt.store, "acme")
    sources.save(ctx, rt.store, "faq/devolver", title="¿Cómo devuelvo un pedido?", content=RETURN_ES, type="qa",
                 language="es")
    sources.save(ctx, rt.store, "faq/return", title="How do I return an order?", content=RETURN_EN, type="qa",
                 language="en")
    rt.index.train(ctx)
    script: list = []
    app = create_app(load_settings(env), runtime=rt,
                     provider=lambda: script.pop(0) if script else OfflineResponder(LENIENT))
    try:
        with in_thread(app) as url:
            yield Served(url, rt, site_keys.ensure(ctx, rt.store).public_key, script)
    finally:
        rt.close()


@contextmanager
def demo_page(browser, url: str, **context_options):
    """A fresh tab on the demo page with the panel open; records dialogs (an alert() would be a script that ran).
    ``context_options`` go to the browser context (a visitor's ``timezone_id``, ``locale``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **context_options)
    tab = context.new_page()
    tab.set_default_timeout(20_000)
    tab.dialogs = []
    tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
    tab.goto(f"{url}/demo")
    tab.locator("#cob-bubble").click()
    tab.locator("#cob-panel").wait_for(state="visible")
    try:
        yield tab
    finally:
        context.close()


def ask(page, question: str):
    """Ask through the panel; the assistant message once its turn is over."""
    before = page.locator(".cob-msg.cob-assistant").count()
    page.locator("#cob-input").fill(question)
    page.locator("#cob-send").click()
    message = page.locator(".cob-msg.cob-assistant").nth(before)
    message.locator("xpath=self::*[@data-status]").wait_for()
    return message


def sse(*events: tuple[str, dict]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n" for name, data in events)


def answer_stream(text: str, html: str, *, language: str = "es", status: str = "answered", turn_id=None,
                  citations: list | None = None, conversation_id: str = "conv-1") -> str:
    """What /v1/chat streams for one answer (the shape api/events.py writes)."""
    done = {"truncated": False, "status": status, "conversation_id": conversation_id, "language": language,
            "usage": {}}
    if turn_id is not None:
        done["turn_id"] = turn_id
    events = [("citations", {"items": citations})] if citations else []
    return sse(*events, ("text", {"d": text}), ("rendered", {"html": html}), ("done", done))


def mock_chat(page, body_for):
    """Answer every POST /v1/chat of ``page`` with ``body_for(question)`` (an SSE body)."""
    def handle(route):
        question = json.loads(route.request.post_data or "{}").get("message", "")
        route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=body_for(question))

    page.route("**/v1/chat", handle)
