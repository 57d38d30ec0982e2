"""Form examples (#17 item 8): neutral, or in the tenant's own language, never the Spanish demo's
(``politicas/envios``, "¿Cuánto tarda un envío a Canarias?") on another tenant's Sources page."""
from __future__ import annotations

from core.tenancy import settings as tenant_settings
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from pages import placeholders
from tests.pages.test_sources import open_page

DEMO_WORDS = ("politicas", "envio", "envío", "Canarias", "plazos", "devoluciones")


def test_the_sources_forms_show_neutral_examples_in_the_tenants_language(runtime, monkeypatch):
    create_tenant(runtime.store, "acme", "Acme")
    tenant_settings.update(local_operator(runtime.store, "acme"), runtime.store, languages=["en"])
    at = open_page(runtime, monkeypatch)
    shown = {w.key: str(w.placeholder) for kind in ("text_input", "text_area") for w in getattr(at, kind)}
    assert shown["src_search"] == "The question, as a customer would write it"
    assert placeholders.SOURCE_PATH in shown.values()  # "Path in the tree" of a new document
    assert not [p for p in shown.values() if any(word in p for word in DEMO_WORDS)], shown
