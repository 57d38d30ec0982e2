"""The Sandbox page, driven through Streamlit's AppTest (no browser, no network, deterministic).

The runtime is a temporary data dir with the hashing embedder; the LLM is a small grounded fake that
searches, then answers with the best result's sentence cited (or the fixed abstention when nothing was
found), so the real loop, tools, retrieval and gate decide every status the page shows.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.agent import prompts
from core.agent.protocol import Reply, ToolCall
from core.base.config import load_settings
from core.base.language import detect
from core.channels import conversations
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy.context import authenticate, local_operator
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.apptest import settle
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "sandbox.py")
PASSWORD = "a long sandbox password"
INSTALMENTS = ("¿Puedo pagar a plazos?", "Sí, puedes pagar a plazos en tres cuotas sin intereses con tarjeta.")
SCOOTERS = "¿Vendéis patinetes eléctricos?"
SCOOTERS_ANSWER = "No vendemos patinetes eléctricos; solo bicicletas y accesorios."
VALENCIA = "¿Cuánto tardan los envíos a Valencia?"
VALENCIA_ANSWER = "Los envíos a Valencia tardan de 1 a 2 días laborables."


class GroundedFake:
    """A deterministic stand-in for an LLM: search the question, then cite the best result's last line."""

    name, model = "fake-llm", "grounded-1"

    def __init__(self) -> None:
        self.invent = False  # cite an id no tool returned (the gate must withhold it)
        self.missing = ""  # mark the answer partial: the material does not mention this

    def complete(self, system, messages, tools, *, max_tokens=1024, timeout=60.0):
        at = max(i for i, m in enumerate(messages)
                 if m.role == "user" and not m.content.startswith("Your answer was NOT"))
        question = messages[at].content
        if not any(m.role == "assistant" and m.tool_calls for m in messages[at + 1:]):
            return Reply("", (ToolCall("call-1", "search_knowledge", {"query": question}),), self.name, self.model,
                         stop_reason="tool_use")
        results = [r for m in messages[at + 1:] if m.role == "tool" for r in json.loads(m.content).get("results", [])]
        if not results:
            return Reply(prompts.message("abstain", detect(question)), (), self.name, self.model)
        best = results[0]
        cited = "deadbeef0000" if self.invent else best["id"]
        mark = f"[[missing: {self.missing}]] " if self.missing else ""
        return Reply(f"{mark}{best['text'].splitlines()[-1]} [[cite:{cited}]]", (), self.name, self.model)


@pytest.fixture
def fake(monkeypatch):
    provider = GroundedFake()
    monkeypatch.setattr("core.agent.providers.chain.build_provider", lambda settings: provider)
    return provider


@pytest.fixture
def runtime(tmp_path, monkeypatch, fake):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder(),
                      tuning=TEST_TUNING)
    monkeypatch.setattr(common, "open_runtime", lambda: rt)
    st.cache_resource.clear()
    create_tenant(rt.store, "acme", "Acme")
    ctx = local_operator(rt.store, "acme")
    sources.save(ctx, rt.store, "faq/plazos", title=INSTALMENTS[0], content=INSTALMENTS[1], type="qa", language="es")
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", language="es",
                 content="Los envíos a Canarias tardan de 5 a 8 días laborables.")
    rt.index.train(ctx)
    yield rt
    st.cache_resource.clear()
    rt.close()


@pytest.fixture
def ctx(runtime):
    return local_operator(runtime.store, "acme")


def open_page(store, role: str = "editor") -> AppTest:
    email = f"{role}@acme.test"
    create_user(store, "acme", email, PASSWORD, role)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[common.SESSION_KEY] = authenticate(store, email, PASSWORD)
    at.session_state[common.TENANT_KEY] = "acme"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def say(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error")
                     for e in getattr(at, kind))


def badges(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.markdown if "-badge[" in str(e.value)]


def frames(at: AppTest, column: str) -> list:
    return [d.value for d in at.dataframe if column in d.value.columns]


def only_conversation(runtime, ctx):
    rows = runtime.store.query("SELECT id FROM conversations WHERE tenant_id = ?", [ctx.tenant_id])
    assert len(rows) == 1
    return conversations.get(ctx, runtime.store, rows[0]["id"])


def test_a_covered_question_is_answered_with_its_citation_and_trace(runtime, ctx):
    at = say(open_page(runtime.store), INSTALMENTS[0])
    assert any("Answered" in b for b in badges(at))
    assert INSTALMENTS[1].rstrip(".") in texts(at) and "[1]" in texts(at)
    assert "[1] faq/plazos — ¿Puedo pagar a plazos?" in texts(at).replace("\\", "")
    assert [e.label for e in at.expander] == ["Trace"]
    chunks = frames(at, "Why")[0]
    assert chunks.iloc[0]["Path"] == "faq/plazos" and chunks.iloc[0]["Selected"] == "✓ selected"
    assert chunks.iloc[0]["Type"] == "qa" and chunks.iloc[0]["Score"] > 0
    dropped = chunks[chunks["Selected"] == "✗ dropped"]
    assert len(dropped) >= 1 and all(w.startswith("below the similarity floor") for w in dropped["Why"])
    verdicts = frames(at, "Verdict")[0]
    assert list(verdicts["Verdict"]) == ["✓ supported"] and verdicts.iloc[0]["Cites"] == chunks.iloc[0]["Chunk"]
    tools = frames(at, "Tool")[0]
    assert list(tools["Tool"]) == ["search_knowledge"] and list(tools["Result"]) == ["found"]
    shown = texts(at)
    assert "rewritten query" in shown and "`fake-llm`" in shown and "`grounded-1`" in shown and " ms" in shown
    convo = only_conversation(runtime, ctx)
    assert convo.channel == "sandbox" and convo.customer_id is None
    assert f"Conversation `{convo.id}`" in shown
    say(at, "¿Y cuánto tardan los envíos a Canarias?")  # the same conversation continues
    assert (only_conversation(runtime, ctx).id == convo.id
            and len(conversations.turns(ctx, runtime.store, convo.id)) == 2)


def test_a_refusal_shows_its_trace_and_becomes_a_trained_qa_source(runtime, ctx):
    at = say(open_page(runtime.store), SCOOTERS)
    assert any("Refused" in b for b in badges(at))
    assert [e.label for e in at.expander] == ["Refusal trace"]
    assert "`not_covered`" in texts(at) and "Recorded as gap #" in texts(at)
    assert list(frames(at, "Tool")[0]["Result"]) == ["empty"]
    assert set(frames(at, "Why")[0]["Selected"]) <= {"✗ dropped"}
    at.button(key=next(b.key for b in at.button if b.key.startswith("sbx_qa_create_"))).click().run()
    key = next(t.key for t in at.text_input if t.key.startswith("sbx_qa_path_"))
    assert at.text_input(key=key).value == "faq/vendeis-patinetes-electricos"
    assert at.text_input(key=key.replace("path", "question")).value == SCOOTERS
    at.button[-1].click().run()  # Save with no answer: a message, not a traceback
    assert not at.exception and "has no content" in " ".join(e.value for e in at.error)
    at.text_area(key=key.replace("path", "answer")).set_value(SCOOTERS_ANSWER)
    at.button[-1].click().run()
    source = sources.get(ctx, runtime.store, "faq/vendeis-patinetes-electricos")
    assert source.type == "qa" and source.title == SCOOTERS and source.content == SCOOTERS_ANSWER and source.changed
    assert "Saved the Q&A source `faq/vendeis-patinetes-electricos`" in texts(at)
    settle(at.button(key=key.replace("qa_path", "train")).click().run())  # trained in the background
    assert not at.exception, [e.value for e in at.exception]
    assert not sources.get(ctx, runtime.store, "faq/vendeis-patinetes-electricos").changed
    assert "Trained 1 source(s)" in texts(at)
    at.button(key=key.replace("qa_path", "again")).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Answered" in b for b in badges(at))
    assert "faq/vendeis-patinetes-electricos" in texts(at).replace("\\", "")
    assert len(conversations.turns(ctx, runtime.store, only_conversation(runtime, ctx).id)) == 2


def test_a_partial_answer_shows_what_is_missing_and_offers_the_qa_fix(runtime, ctx, fake):
    fake.missing = "Valencia"
    at = say(open_page(runtime.store), VALENCIA)
    assert ":yellow-badge[Partial: point not covered]" in badges(at)
    shown = texts(at).replace("\\", "")
    assert "Nuestro material no menciona “Valencia”." in shown and "5 a 8 días laborables" in shown
    assert "[1] politicas/envios — Envíos" in shown and "Recorded as gap #" in shown
    assert "The material does not mention “Valencia”: the answer says so" in shown
    assert "**Not in the material:** “Valencia”" in shown and "`partial` — the material covers the topic" in shown
    assert [e.label for e in at.expander] == ["Partial answer trace"]
    assert list(frames(at, "Verdict")[0]["Verdict"]) == ["✓ supported"]
    at.button(key=next(b.key for b in at.button if b.key.startswith("sbx_qa_create_"))).click().run()
    key = next(t.key for t in at.text_input if t.key.startswith("sbx_qa_path_"))
    assert at.text_input(key=key).value == "faq/cuanto-tardan-envios-valencia"
    assert "write the answer that covers it" in texts(at).replace("\\", "")
    at.text_area(key=key.replace("path", "answer")).set_value(VALENCIA_ANSWER)
    at.button[-1].click().run()
    assert sources.get(ctx, runtime.store, "faq/cuanto-tardan-envios-valencia").content == VALENCIA_ANSWER
    settle(at.button(key=key.replace("qa_path", "train")).click().run())  # trained in the background
    fake.missing = ""  # the new pair covers the point asked
    at.button(key=key.replace("qa_path", "again")).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert badges(at)[-1].startswith(":green-badge[Answered")
    assert "faq/cuanto-tardan-envios-valencia" in texts(at).replace("\\", "")


def test_a_withheld_answer_shows_the_gate_verdict_per_claim(runtime, fake):
    fake.invent = True
    at = say(open_page(runtime.store), INSTALMENTS[0])
    assert any("Refused: answer withheld" in b for b in badges(at)) and "`withheld_unsupported`" in texts(at)
    rounds = frames(at, "Verdict")
    assert len(rounds) == 2 and all(list(r["Verdict"]) == ["✗ invented citation"] for r in rounds)
    assert "did not pass" in texts(at) and INSTALMENTS[1] not in "\n".join(m.value for m in at.chat_message[1].markdown)


def test_a_qa_user_sees_the_refusal_trace_but_not_the_create_form(runtime):
    at = say(open_page(runtime.store, "qa"), SCOOTERS)
    assert [e.label for e in at.expander] == ["Refusal trace"] and frames(at, "Tool")
    assert not [b for b in at.button if b.key and b.key.startswith("sbx_qa_create_")]
    assert "An editor can turn this question into a Q&A source." in texts(at)


def test_channel_and_identified_customer_are_stored_on_the_conversation(runtime, ctx):
    at = open_page(runtime.store)
    assert at.selectbox(key="sbx_channel").value == "sandbox"
    assert at.text_input(key="sbx_customer").disabled
    at.selectbox(key="sbx_channel").set_value("identified").run()
    at.selectbox(key="sbx_who").set_value("Identified customer").run()
    say(at, INSTALMENTS[0])  # no id written yet
    assert [e.value for e in at.error] == ["Write the customer's id, or chat as Anonymous."]
    at.text_input(key="sbx_customer").set_value("cus_1042").run()
    say(at, SCOOTERS)
    convo = only_conversation(runtime, ctx)
    assert convo.channel == "identified" and convo.customer_id == "cus_1042"
    say(at, SCOOTERS)  # a support channel: the second uncovered question goes to a person
    assert any("Handed off" in b for b in badges(at)) and "handoff #" in texts(at)
    at.button(key="sbx_new").click().run()
    assert not at.chat_message and "The next message starts a new conversation." in texts(at)
    at.selectbox(key="sbx_channel").set_value("web").run()
    at.selectbox(key="sbx_who").set_value("Anonymous").run()
    say(at, INSTALMENTS[0])
    rows = runtime.store.query("SELECT channel, customer_id FROM conversations WHERE tenant_id = ? "
                               "ORDER BY created_at, rowid", [ctx.tenant_id])
    assert [(r["channel"], r["customer_id"]) for r in rows] == [("identified", "cus_1042"), ("web", None)]


def test_a_message_over_the_limit_is_an_error_message_and_starts_nothing(runtime, ctx):
    at = say(open_page(runtime.store), "x" * 2001)
    assert [e.value for e in at.error] == [
        "The message has 2001 characters; the limit is 2000. Shorten it or split it in two."]
    assert not at.chat_message
    assert runtime.store.query("SELECT COUNT(*) AS n FROM conversations WHERE tenant_id = ?",
                               [ctx.tenant_id])[0]["n"] == 0


def test_a_disabled_channel_is_an_error_message_and_starts_nothing(runtime, ctx):
    from core.channels.conversations import CHANNELS
    from core.tenancy import settings as tenant_settings

    tenant_settings.update(ctx, runtime.store, channels_enabled=[c for c in CHANNELS if c != "sandbox"])
    at = say(open_page(runtime.store), "¿Cuánto tarda un envío?")
    assert len(at.error) == 1 and "The channel 'sandbox' is not enabled" in at.error[0].value
    assert runtime.store.query("SELECT COUNT(*) AS n FROM conversations WHERE tenant_id = ?",
                               [ctx.tenant_id])[0]["n"] == 0


def test_the_trace_shows_how_much_a_qa_answers_phrasings_agree(runtime, ctx):
    asked = ["¿Cuánto tarda el envío de mi pedido?", "¿En cuántos días llega el pedido?", "¿Cuándo recibo mi pedido?"]
    others = ["¿Puedo devolver un producto?", "¿Cuántos días tengo para devolver algo?", "¿Cómo hago una devolución?"]
    for group, (answer, phrasings) in {"envios": ("Los pedidos llegan en 2 a 4 días laborables.", asked),
                                      "devoluciones": ("Tienes 30 días naturales para devolver.", others)}.items():
        for n, question in enumerate(phrasings):
            sources.save(ctx, runtime.store, f"faq/{group}/{n}", title=question, content=answer, type="qa",
                         language="es")
    assert runtime.index.train(ctx).variant_groups == 2
    at = say(open_page(runtime.store), "¿Cuántos días tarda en llegar mi pedido?")
    chunks = frames(at, "Phrasings agree")[0]
    top = chunks.iloc[0]
    assert top["Path"].startswith("faq/envios/") and top["Phrasings agree"] >= 0.55
    unmodelled = chunks[~chunks["Path"].str.match(r"faq/(envios|devoluciones)/")]  # one phrasing, or a text
    assert len(unmodelled) >= 1 and unmodelled["Phrasings agree"].isna().all()
