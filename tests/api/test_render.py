"""The answer renderer (api/render.py): the safe markdown subset becomes HTML, and nothing of the injection corpus
(tests/api/markup_payloads.py, and the prompt-injection payloads of tests/agent/test_injection.py) becomes an
element, an attribute or a live link; it all comes out as text."""
from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings, strategies as st

from api.events import turn_events
from api.render import TAGS, render_answer, safe_link
from core.agent.outcome import Status
from core.channels.turn import TurnResult
from tests.agent.test_injection import PAYLOADS_EN, PAYLOADS_ES, PAYLOADS_PT
from tests.api.markup_payloads import HTML_PAYLOADS, MARKDOWN_PAYLOADS, SAFE_HREFS


class Elements(HTMLParser):
    """The start tags (with their attributes) and the visible text of an HTML fragment."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "br":
            self.text.append("\n")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        raise AssertionError(f"a comment reached the output: {data!r}")

    @property
    def visible(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.text)).strip()


def allowed_only(html: str) -> Elements:
    """Fail unless ``html`` holds only the renderer's tags, links with a safe href and nothing else as attributes."""
    found = Elements(html)
    for tag, attrs in found.tags:
        assert tag in TAGS, (tag, html)
        if tag == "a":
            assert set(attrs) == {"href", "rel", "target"} and safe_link(attrs["href"]), html
            assert attrs["rel"] == "nofollow noopener noreferrer" and attrs["target"] == "_blank"
        elif tag == "ol":
            assert set(attrs) <= {"start"} and all(v.isdigit() for v in attrs.values()), html
        else:
            assert attrs == {}, (tag, attrs, html)
    return found


def test_bold_lists_code_and_an_absolute_link_render_as_html():
    html = render_answer("Puedes devolverlo en **30 días** o *antes*. [1]\n\n"
                         "- Entra en `Mi cuenta`.\n- Abre el [formulario](https://shop.test/devoluciones).\n\n"
                         "1. uno\n2. dos\n\n```\npython -m core train demo\n```")
    assert "<strong>30 días</strong>" in html and "<em>antes</em>" in html
    assert "<ul>\n<li>Entra en <code>Mi cuenta</code>.</li>" in html and "<ol>\n<li>uno</li>" in html
    assert ('<a href="https://shop.test/devoluciones" rel="nofollow noopener noreferrer" target="_blank">'
            "formulario</a>") in html
    assert "<pre><code>python -m core train demo\n</code></pre>" in html
    assert "[1]" in html  # the citation marker stays text: the widget makes it a source button
    allowed_only(html)


@pytest.mark.parametrize("text, shown", [
    ("Mira <img src=x onerror=alert(1)> aquí", "Mira <img src=x onerror=alert(1)> aquí"),
    ("[pulsa](javascript:alert(1))", "pulsa"),
    ("<div onclick=alert(1)>\n<b>negrita</b>\n</div>", "<div onclick=alert(1)> <b>negrita</b> </div>"),
    ("[el README](../README.md#devoluciones)", "el README"),
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),
])
def test_raw_html_scriptable_and_relative_links_do_not_render(text, shown):
    html = render_answer(text)
    found = allowed_only(html)
    assert {tag for tag, _ in found.tags} <= {"p", "br"} and found.visible == shown


def test_a_mailto_link_renders_and_a_heading_is_a_bold_paragraph():
    html = render_answer("# Contacto\nEscríbenos a [soporte](mailto:ayuda@shop.test).")
    assert html.startswith("<p><strong>Contacto</strong></p>")
    assert '<a href="mailto:ayuda@shop.test"' in html
    allowed_only(html)


def test_line_breaks_stay_line_breaks_and_a_numbered_list_keeps_its_start():
    assert render_answer("¿Para qué talla?\n¿Y qué color?") == "<p>¿Para qué talla?<br>\n¿Y qué color?</p>\n"
    assert render_answer("3. tercero\n4. cuarto").startswith('<ol start="3">')


def test_a_citation_marker_never_becomes_a_link_even_with_a_definition():
    html = render_answer("Envío gratis. [1]\n\n[1]: https://evil.test/")
    assert "href" not in html and "[1]" in html and "[1]: https://evil.test/" in html


@pytest.mark.parametrize("payload", HTML_PAYLOADS)
def test_every_raw_html_payload_comes_out_as_its_own_text(payload):
    found = allowed_only(render_answer(payload))
    assert {tag for tag, _ in found.tags} <= {"p", "br"}
    as_written = re.sub(r"\s+", " ", payload).strip()
    assert found.visible in (as_written, unescape(as_written))  # an entity shows as its character


@pytest.mark.parametrize("payload", MARKDOWN_PAYLOADS)
def test_no_markdown_payload_makes_an_element_or_a_link_it_should_not(payload):
    html = render_answer(payload)
    found = allowed_only(html)
    hrefs = {attrs["href"] for tag, attrs in found.tags if tag == "a"}
    assert hrefs <= SAFE_HREFS, hrefs
    assert "javascript" not in " ".join(hrefs).lower() and "evil.test" not in " ".join(hrefs)
    assert "onerror" not in "".join(str(attrs) for _, attrs in found.tags)
    if "<img" in payload:  # the markup is shown as text, wherever it stood
        assert "<img src=x onerror=alert(1)>" in found.visible


@pytest.mark.parametrize("payload", PAYLOADS_ES + PAYLOADS_PT + PAYLOADS_EN)
def test_the_prompt_injection_payloads_stay_plain_text(payload):
    found = allowed_only(render_answer(payload))
    assert found.visible == payload


@pytest.mark.parametrize("href, ok", [
    ("https://shop.test/a?b=1", True), ("http://shop.test", True), ("mailto:ana@shop.test", True),
    ("https://", False), ("mailto:nobody", False), ("javascript:alert(1)", False), ("//evil.test", False),
    ("../README.md", False), ("data:text/html,x", False), ("https://shop.test/a b", False),
    ("HTTPS://SHOP.TEST/", True), ("ftp://shop.test/file", False),
])
def test_safe_link(href, ok):
    assert safe_link(href) is ok


MARKUP = st.sampled_from(["**", "*", "_", "`", "```\n", "[", "]", "(", ")", "<", ">", "&", "#", "- ", "1. ", "\n",
                          "\n\n", "    ", "!", "\\", '"', "'", "=", ":", "javascript:", "https://shop.test/",
                          "../x.md", "<img src=x onerror=alert(1)>", "<script>", "</script>", "&#106;", "mailto:a@b.c",
                          "onclick=", "[1]", " ", "texto", "word"])


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKUP, max_size=40).map("".join))
def test_any_text_renders_to_the_allowed_tags_and_links_only(text):
    allowed_only(render_answer(text))


def test_the_stream_carries_the_rendered_answer_after_its_text_and_done_names_the_language():
    result = TurnResult(Status.ANSWERED, "Gratis en pedidos de **más de 50 €**. [1]", "c1", "es",
                        citations=[{"id": "x", "title": "Envíos", "path": "politicas/envios"}])
    events = turn_events(result)
    names = [name for name, _ in events]
    assert names == ["citations", "text", "rendered", "done"]
    assert dict(events)["rendered"]["html"] == "<p>Gratis en pedidos de <strong>más de 50 €</strong>. [1]</p>\n"
    assert dict(events)["done"]["language"] == "es"
