"""The Gap backlog page (#17): its labels never show a mask placeholder or the words that announced one, and the
empty backlog sends you to the Sandbox (a page link), not to a CLI command."""
from __future__ import annotations

from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.pages.test_gaps import open_page, table, texts

QUESTIONS = [
    ("Hi, my email is ana@example.com and my phone is +1 415 555 0100, how much does the enterprise support plan "
     "cost?", "en"),
    ("Hola, soy Lucía Pérez, mi móvil es 612 345 678: ¿hacéis envíos a Canarias?", "es"),
    ("Olá, meu nome é João Silva, email joao@x.pt. Vocês entregam nos Açores?", "pt"),
]


def test_the_backlog_shows_labels_without_placeholders_or_their_cues(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    for question, language in QUESTIONS:
        runtime.backlog.record(ctx, question, language, "web", "c1")
    at = open_page()
    labels = sorted(table(at)["Question"])
    assert labels == ["entregam Açores", "hacéis envíos Canarias", "much enterprise support plan cost"]
    for placeholder in ("EMAIL", "PHONE", "PERSON", "email", "phone", "móvil", "nome"):
        assert all(placeholder not in label for label in labels)


def test_the_empty_backlog_links_to_the_sandbox(runtime):
    create_tenant(runtime.store, "quiet", "Quiet")
    at = open_page("quiet")
    assert "No gaps yet" in texts(at) and "python -m core" not in texts(at)
    [link] = at.get("page_link")
    assert link.proto.page == "sandbox" and link.proto.page_script_hash  # the Sandbox page of the app
    assert link.proto.label == "Try it: ask the Sandbox a question your knowledge does not answer"
