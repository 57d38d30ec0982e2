"""The widget in headless Chromium shows answers rendered and safe, labelled in the visitor's language: a markdown
answer of the real endpoint (bold, list, code, link) becomes HTML elements with its source buttons, markup planted
in the material shows as text (no element, no handler runs), every payload of the injection corpus comes out as
text, and the labels follow the answer's language (English under an English answer on a Spanish page)."""
from __future__ import annotations

import json
import re
from html import unescape

from api.render import render_answer
from tests.agent.test_injection import PAYLOADS_EN, PAYLOADS_ES, PAYLOADS_PT
from tests.api.markup_payloads import ALL, HTML_PAYLOADS
from tests.api.widget_page import answer_stream, ask, mock_chat, sse
from tests.browser import needs_chromium, shot
from tests.fakes import ScriptedProvider

pytestmark = needs_chromium  # the fixtures served, browser and page: tests/api/conftest.py

#: Elements an answer body may hold: the renderer's tags, and the widget's own source buttons (a or button).
BODY_TAGS = {"P", "BR", "STRONG", "EM", "CODE", "PRE", "UL", "OL", "LI", "A", "SPAN", "BUTTON"}
#: What the widget's DOM holds after the answers, in one pass: tags, attributes named on*, javascript: URLs.
AUDIT = """() => {
  const root = document.getElementById('cob-root');
  const MEDIA = 'img,script,svg,iframe,object,embed,video,style,link,meta,form,input,base,math,template,details';
  const bodies = [...root.querySelectorAll('.cob-assistant .cob-body')];
  const tags = new Set(bodies.flatMap(b => [...b.querySelectorAll('*')].map(n => n.tagName)));
  const handlers = [...document.querySelectorAll('*')].flatMap(n => [...n.attributes].map(a => a.name))
    .filter(name => name.startsWith('on'));
  const urls = bodies.flatMap(b => [...b.querySelectorAll('[href],[src],[action],[srcdoc],[style]')])
    .map(n => n.getAttribute('href') || 'not a link: ' + n.outerHTML);
  return {tags: [...tags], handlers, urls, pwned: window.__pwned === undefined ? null : window.__pwned,
          media: bodies.flatMap(b => [...b.querySelectorAll(MEDIA)]).length + document.querySelectorAll(
            'img,iframe,object,embed,video,audio').length};
}"""


def citing(source: str, query: str, answer: str):
    """A scripted model that searches for ``query``, then writes ``answer`` with ``{cite}`` replaced by the chunk of
    ``source``."""
    def reply(messages):
        for message in messages:
            if message.role == "tool":
                for item in json.loads(message.content).get("results", []):
                    if item["source"] == source:
                        return answer.replace("{cite}", f"[[cite:{item['id']}]]")
        raise AssertionError(f"the search found no chunk of {source}")

    return ScriptedProvider(("search_knowledge", {"query": query}), reply, reply)


MARKDOWN_ES = ("Sigue estos pasos: {cite}\n\n"
               "- Entra en **tu cuenta** y abre el pedido. {cite}\n"
               "- Pulsa `Devolver` y elige el motivo. {cite}\n"
               "- Imprime la etiqueta en [la página de devoluciones](https://tienda.example/devoluciones). {cite}\n\n"
               'Guarda el código <img src=x onerror="window.__pwned=1"> que recibirás. {cite}')
MARKDOWN_EN = ("Follow these steps: {cite}\n\n- Sign in to **your account** and open the order. {cite}\n"
               "- Press `Return` and pick a reason. {cite}")


def test_a_markdown_answer_shows_as_html_with_its_sources_and_planted_markup_as_text(page, served):
    served.script.append(citing("faq/devolver", "devolver un pedido", MARKDOWN_ES))
    answer = ask(page, "¿Cómo devuelvo un pedido?")
    assert answer.get_attribute("data-status") == "answered"
    body = answer.locator(".cob-body")
    assert body.get_attribute("data-rendered") == "html"
    assert body.locator("strong").inner_text() == "tu cuenta"
    assert body.locator("ul > li").count() == 3 and body.locator("code").inner_text() == "Devolver"
    link = body.locator('a[href="https://tienda.example/devoluciones"]')
    assert link.inner_text() == "la página de devoluciones" and link.get_attribute("target") == "_blank"
    assert "noopener" in link.get_attribute("rel")
    assert body.locator(".cob-cite").count() == 5  # every [1] became its source button
    assert '<img src=x onerror="window.__pwned=1">' in body.inner_text()
    assert page.locator(".cob-root img").count() == 0 and page.evaluate("window.__pwned") is None
    assert "**" not in body.inner_text() and "](" not in body.inner_text()
    assert answer.locator(".cob-sources-toggle").inner_text() == "Fuentes (1)"
    body.locator(".cob-cite").first.click()
    assert "faq/devolver" in answer.locator(".cob-sources").inner_text()
    shot(page, "widget-markdown-es.png")


def test_the_labels_follow_the_language_of_each_answer(page, served):
    assert page.locator("#cob-input").get_attribute("placeholder") == "Escribe tu pregunta…"  # the page is Spanish
    served.script.append(citing("faq/return", "How do I return an order", MARKDOWN_EN))
    english = ask(page, "How do I return an order?")
    assert english.get_attribute("data-status") == "answered" and english.get_attribute("lang") == "en"
    assert english.locator(".cob-sources-toggle").inner_text() == "Sources (1)"
    assert english.locator(".cob-cite").first.get_attribute("aria-label").startswith("Sources 1")
    assert english.locator(".cob-body li strong").inner_text() == "your account"
    assert page.locator("#cob-input").get_attribute("placeholder") == "Type your question…"
    assert page.locator("#cob-send").get_attribute("aria-label") == "Send"
    assert page.locator("#cob-title").inner_text() == "Help" and page.locator("#cob-root").get_attribute("lang") == "en"
    shot(page, "widget-labels-en.png")
    served.script.append(citing("faq/devolver", "devolver un pedido", MARKDOWN_ES))
    spanish = ask(page, "¿Cómo devuelvo un pedido?")
    assert spanish.locator(".cob-sources-toggle").inner_text() == "Fuentes (1)"
    assert page.locator("#cob-input").get_attribute("placeholder") == "Escribe tu pregunta…"
    assert page.locator("#cob-send").get_attribute("aria-label") == "Enviar"
    assert english.locator(".cob-sources-toggle").inner_text() == "Sources (1)"  # an earlier answer keeps its own


def test_a_portuguese_answer_gets_portuguese_labels(page):
    text = "Devolução em **30 dias**. [1]"
    cited = [{"n": 1, "id": "c", "title": "Devoluções", "path": "faq/devolucao", "url": ""}]
    mock_chat(page, lambda q: answer_stream(text, render_answer(text), language="pt", citations=cited))
    answer = ask(page, "Posso devolver?")
    assert answer.locator(".cob-sources-toggle").inner_text() == "Fontes (1)"
    assert page.locator("#cob-input").get_attribute("placeholder") == "Escreva a sua pergunta…"


def visible(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_every_payload_of_the_injection_corpus_shows_as_text(page):
    corpus = ALL + PAYLOADS_ES[:10] + PAYLOADS_PT[:5] + PAYLOADS_EN[:5]
    mock_chat(page, lambda q: answer_stream(q, render_answer(q)))  # the endpoint's own rendering of each
    shown = []
    for payload in corpus:
        page.evaluate("text => window.Cobertura.ask(text)", payload)
        shown.append(page.locator(".cob-msg.cob-assistant .cob-body").last.inner_text())
        if payload == HTML_PAYLOADS[-1]:
            shot(page, "widget-injection-html.png")
    audit = page.evaluate(AUDIT)
    assert set(audit["tags"]) <= BODY_TAGS, audit["tags"]
    assert audit["handlers"] == [] and audit["media"] == 0 and audit["pwned"] is None and page.dialogs == []
    assert [u for u in audit["urls"] if not u.startswith(("https://shop.test/", "mailto:"))] == []
    for payload, text in zip(corpus, shown):
        if payload in HTML_PAYLOADS:
            assert visible(text) in (visible(payload), visible(unescape(payload))), payload
    shot(page, "widget-injection-corpus.png")


def test_html_the_endpoint_never_writes_is_still_copied_as_text_only(page):
    """Defence in depth: even a stream whose rendered HTML carries elements and handlers gets none of them in."""
    raw = ('<p onclick="window.__pwned=1">Hola <img src=x onerror="window.__pwned=2"><script>window.__pwned=3</script>'
           '<a href="javascript:window.__pwned=4">pulsa</a> <a href="../README.md">relativo</a> '
           '<a href="https://shop.test/ok" onmouseover="window.__pwned=5">bien</a></p>'
           '<iframe srcdoc="<script>parent.__pwned=6</script>"></iframe><svg onload="window.__pwned=7"></svg>'
           '<ol start="x" onclick="window.__pwned=8"><li style="color:red">uno</li></ol>')
    mock_chat(page, lambda q: answer_stream("Hola", raw))
    answer = ask(page, "hola")
    body = answer.locator(".cob-body")
    audit = page.evaluate(AUDIT)
    assert audit["handlers"] == [] and audit["media"] == 0 and audit["pwned"] is None and page.dialogs == []
    assert [a.get_attribute("href") for a in body.locator("a").all()] == ["https://shop.test/ok"]
    assert body.locator("ol").get_attribute("start") is None and body.locator("li").get_attribute("style") is None
    assert "pulsa" in body.inner_text() and "relativo" in body.inner_text() and "uno" in body.inner_text()


def test_a_partial_answer_keeps_its_notice_when_rendered(page):
    text = "Nuestro material no menciona “Valencia”. Lo que sí dice:\n\nLa tienda está en **Madrid**. [1]"
    stream = answer_stream(text, render_answer(text), status="partial",
                           citations=[{"n": 1, "id": "c", "title": "Horarios", "path": "tienda/horarios", "url": ""}])
    mock_chat(page, lambda q: stream.replace('"usage": {}', '"usage": {}, "missing": ["Valencia"]'))
    answer = ask(page, "¿Tenéis tienda en Valencia?")
    note = answer.locator(".cob-partial-note")
    assert note.inner_text() == "Nuestro material no menciona “Valencia”. Lo que sí dice:"
    assert note.locator(".cob-cite").count() == 0
    assert answer.locator(".cob-body strong").inner_text() == "Madrid"
    assert answer.locator(".cob-body > p .cob-cite").count() == 1


def test_notices_made_before_the_language_was_known_are_relabelled(page):
    """A handoff notice comes before `done` says the answer is English: it is written in the page's Spanish, then
    switched; the retry button of a cut answer is in the answer's language too."""
    handing = "I am handing this conversation to a person on the team, who will see everything so far."
    handoff = answer_stream(handing, render_answer(handing), language="en", status="handoff").replace(
        "event: done", sse(("handoff", {"id": 5, "reason": "asked", "message": handing})) + "event: done")
    mock_chat(page, lambda q: handoff)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    answer = ask(page, "I want to talk to a person")
    assert answer.locator(".cob-notice.cob-handoff").inner_text() == (
        "A person from the team will reply here: keep this page open.")
    page.unroute("**/v1/chat")
    mock_chat(page, lambda q: 'event: text\ndata: {"d": "Half an answ"}\n\n')  # cut: no done
    cut = ask(page, "And returns?")
    assert cut.get_attribute("data-status") == "truncated"
    assert cut.locator(".cob-notice.cob-truncated").inner_text() == "The answer was cut off and may be incomplete."
    assert errors == []
