"""Gap labels and proposed article paths never carry a mask placeholder, nor the words that only announced one
(#17 item 7: "email phone enterprise support plan cost"); stored labels are cleaned on read and recomputed by
``gaps relabel``."""
from __future__ import annotations

import re

import pytest

from core.__main__ import main
from core.gaps.drafting import draft_article
from core.gaps.labels import ONLY_PERSONAL, article_path, clean_label, question_path, topic_label
from core.gaps.pii import PLACEHOLDER_OF, mask
from core.gaps.relabeling import relabel
from core.knowledge.sources import slug
from tests.fakes import ScriptedProvider

KINDS = "|".join(k.lower() for k in PLACEHOLDER_OF)  # email|phone|card|iban|id|url|ip|person

# (raw question, language, the label) — e-mails, phones, names, ids, cards and URLs, in es / en / pt
QUESTIONS = [
    ("Hi, my email is ana@example.com and my phone is +1 415 555 0100, how much does the enterprise support plan "
     "cost?", "en", "much enterprise support plan cost"),
    ("email ana@example.com phone +14155550100 enterprise support plan cost", "en", "enterprise support plan cost"),
    ("My email is ana@example.com and phone 600123123 — what does the enterprise support plan cost?", "en",
     "enterprise support plan cost"),
    ("Check https://x.com/reset?token=abcdef123456 please, my name is Bob Smith, why is login broken", "en",
     "login broken"),
    ("call me at 415-555-0100 about the warranty claim", "en", "warranty claim"),
    ("Mr. John Smith here: can I return a helmet? Thanks", "en", "return helmet"),
    ("my card 4111 1111 1111 1111 was charged twice", "en", "card charged twice"),  # the card is the topic here
    ("How do I change my email ana@example.com to a new one?", "en", "change email new one"),
    ("Hola, soy Ana García, mi correo es ana@x.es, ¿cuánto cuesta el plan de soporte?", "es",
     "cuánto cuesta plan soporte"),
    ("mi correo electrónico es ana@x.es y mi móvil 612 345 678 ¿cuánto cuesta el plan de soporte?", "es",
     "cuánto cuesta plan soporte"),
    ("Me llamo Lucía Pérez, mi número de teléfono es 612345678, quiero devolver una bicicleta", "es",
     "quiero devolver bicicleta"),
    ("Hola Ana, ¿hacéis envíos a Canarias? Gracias, Pedro", "es", "hacéis envíos Canarias"),
    ("mi DNI 12345678Z no aparece en la factura", "es", "DNI aparece factura"),
    ("el enlace https://tienda.es/reset?token=ab12cd34ef56 no funciona", "es", "enlace funciona"),
    ("Olá, meu nome é João Silva, tel. 912 345 678. Quanto custa o plano?", "pt", "Quanto custa plano"),
    ("meu email é joao@x.pt quanto custa o plano empresarial obrigado", "pt", "quanto custa plano empresarial"),
    ("Olá, o meu telefone é +351 912 345 678 e o email joao@x.pt, vocês entregam nos Açores?", "pt",
     "entregam Açores"),
]


@pytest.mark.parametrize("question, language, label", QUESTIONS)
def test_a_label_holds_what_was_asked_never_a_placeholder_or_its_cue(question, language, label):
    masked = mask(question, language).text
    assert "<" in masked  # something was masked
    assert topic_label(masked, language) == label
    assert article_path(label, 7) == f"faq/{slug(label)}"
    # a kind's name is in a label only where the customer wrote it as the topic ("my card … was charged")
    named = re.findall(rf"\b({KINDS})\b", label.lower())
    assert not named or question.lower().count(named[0]) == 1 and label in ("card charged twice",
                                                                             "change email new one")


@pytest.mark.parametrize("masked, language", [("<EMAIL>", "en"), ("mi correo es <EMAIL>", "es"),
                                              ("meu telefone: <PHONE>", "pt"), ("Soy <PERSON>. <PHONE>", "es")])
def test_a_question_of_personal_data_only_is_labelled_so_in_its_language(masked, language):
    assert topic_label(masked, language) == ONLY_PERSONAL[language]
    assert article_path(ONLY_PERSONAL[language], 12) == "faq/gap-12"


def test_without_a_placeholder_the_label_is_unchanged():
    assert topic_label("¿Vendéis patinetes eléctricos?", "es") == "Vendéis patinetes eléctricos"
    assert topic_label("Do you have an email newsletter?", "en") == "email newsletter"  # "email" is the topic
    assert topic_label("???", "en") == "???"


def test_stored_labels_and_paths_lose_their_placeholders():
    assert clean_label("<EMAIL> <PHONE> plan cost") == "plan cost"
    assert clean_label("<PERSON>", "pt") == ONLY_PERSONAL["pt"]
    assert article_path("<EMAIL> plan cost", 3) == "faq/plan-cost" and article_path("<EMAIL>", 3) == "faq/gap-3"


# -- the backlog ---------------------------------------------------------------------------------------------------
def test_a_recorded_question_gets_a_clean_label_and_draft_path(rt, ctx):
    gap_id = rt.backlog.record(ctx, "My email is ana@example.com and phone 600123123 — what does the enterprise "
                                    "support plan cost?", "en", "web", "c1")
    gap = rt.backlog.require(ctx, gap_id)
    assert gap.label == "enterprise support plan cost"
    draft = draft_article(ctx, rt, gap.id)
    assert (draft["path"], draft["title"]) == ("faq/enterprise-support-plan-cost", "enterprise support plan cost")
    llm = draft_article(ctx, rt, gap.id, ScriptedProvider("# Enterprise plan for <EMAIL>\nIt costs [[FALTA: …]]."))
    assert (llm["title"], llm["path"]) == ("Enterprise plan for", "faq/enterprise-plan-for")


def test_a_split_gap_is_labelled_from_its_samples_without_placeholders(rt, ctx):
    first = rt.backlog.record(ctx, "¿Vendéis patinetes eléctricos?", "es", "web", "c1")
    assert rt.backlog.record(ctx, "¿Vendéis patinetes eléctricos?", "es", "web", "c2") == first  # the same question
    samples = rt.backlog.samples(ctx, first)
    rt.store.db.execute("UPDATE gap_variants SET sample = ? WHERE tenant_id = ? AND id = ?",
                        ["Hola, soy <PERSON>, email <EMAIL>. ¿Vendéis patinetes baratos?", ctx.tenant_id,
                         samples[0]["id"]])
    new = rt.backlog.split(ctx, first, [samples[0]["id"]])
    assert new.label == "Vendéis patinetes baratos"


def _old_label(rt, ctx, gap_id: int, label: str) -> None:
    """A label as the backlog stored it before #17."""
    rt.store.db.execute("UPDATE gaps SET label = ? WHERE tenant_id = ? AND id = ?", [label, ctx.tenant_id, gap_id])


def test_relabel_recomputes_old_labels_and_keeps_an_editors(rt, ctx):
    old = rt.backlog.record(ctx, "email ana@example.com phone +14155550100 enterprise support plan cost", "en", "web",
                            "c1")
    named = rt.backlog.record(ctx, "Hi, my name is Bob Smith, do you sell skateboards?", "en", "web", "c2")
    placeholder = rt.backlog.record(ctx, "ana@example.com", "en", "web", "c3")
    _old_label(rt, ctx, old, "email phone enterprise support plan cost")
    _old_label(rt, ctx, placeholder, "<EMAIL>")
    assert rt.backlog.require(ctx, placeholder).label == ONLY_PERSONAL["en"]  # cleaned on read already
    rt.backlog.rename(ctx, named, "Skateboards (ask the buyer)")
    changes = relabel(ctx, rt.backlog)
    assert changes == [{"id": old, "old": "email phone enterprise support plan cost",
                        "new": "enterprise support plan cost"}]
    assert rt.backlog.require(ctx, old).label == "email phone enterprise support plan cost"  # a dry run by default
    relabel(ctx, rt.backlog, apply=True)
    assert rt.backlog.require(ctx, old).label == "enterprise support plan cost"
    assert rt.backlog.require(ctx, named).label == "Skateboards (ask the buyer)"
    assert [h["event"] for h in rt.backlog.history(ctx, old)][-1] == "renamed"
    assert relabel(ctx, rt.backlog, apply=True) == []  # nothing left to do


def test_the_relabel_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tenants", "create", "acme"]) == 0
    from core.base.config import load_settings
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from tests.fakes import HashEmbedder

    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder())
    ctx = local_operator(rt.store, "acme")
    gap_id = rt.backlog.record(ctx, "email ana@example.com phone +14155550100 enterprise support plan cost", "en",
                               "web", "c1")
    _old_label(rt, ctx, gap_id, "email phone enterprise support plan cost")
    rt.close()
    capsys.readouterr()
    assert main(["gaps", "relabel", "acme", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"#{gap_id}: 'email phone enterprise support plan cost' -> 'enterprise support plan cost'" in out
    assert "1 gap(s) would be relabelled (dry run)" in out
    assert main(["gaps", "relabel", "acme"]) == 0 and "1 gap(s) relabelled" in capsys.readouterr().out
    assert main(["gaps", "relabel", "acme", "--json"]) == 0
    assert '"changes": []' in capsys.readouterr().out


@pytest.mark.parametrize("question,language,path", [
    ("Hola, soy Ana Pérez (ana.perez@correo.es), ¿hacéis envíos a Canarias?", "es", "faq/haceis-envios-canarias"),
    ("Sou a Maria Santos, telemóvel 912 345 678: posso pagar com MB Way?", "pt", "faq/posso-pagar-mb-way"),
    ("my email is john@example.com", "en", "faq/question"),
])
def test_the_sandbox_fix_proposes_a_path_without_personal_values(question, language, path):
    """The Sandbox's 'Create a Q&A source' proposes faq/ + the masked question's topic: no e-mail, phone or name."""
    assert question_path(question, language) == path
