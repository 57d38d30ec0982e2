"""Settings → Website widget with a public URL (COBERTURA_PUBLIC_URL): the snippets point at it, an endpoint under
a proxy's path is named in data-api, and without it the listening address is used."""
from __future__ import annotations

from tests.pages.test_settings import acme, as_user, open_page, texts  # noqa: F401  (acme is the fixture)


def snippets(at) -> list[str]:
    return [c.value for c in at.code if "widget.js" in c.value]


def test_the_snippet_uses_the_public_url_when_it_is_set(environ, monkeypatch, request):
    environ.update({"COBERTURA_PUBLIC_URL": "https://chat.acme.test/", "COBERTURA_API_HOST": "0.0.0.0"})
    rt = request.getfixturevalue("acme")
    as_user(monkeypatch, rt, "boss@acme.test")
    at = open_page()
    shown = snippets(at)
    assert len(shown) == 2 and all(s.startswith('<script src="https://chat.acme.test/widget.js" data-site-key="pk_')
                                   for s in shown)
    assert "data-api" not in "".join(shown) and "YOUR-SERVER" not in "".join(shown)
    assert 'data-customer-token="TOKEN_FROM_YOUR_BACKEND" defer></script>' in shown[1]
    assert "The address is the endpoint's public URL, https://chat.acme.test (COBERTURA_PUBLIC_URL)." in texts(at)


def test_an_endpoint_under_a_path_is_named_in_data_api(environ, monkeypatch, request):
    environ["COBERTURA_PUBLIC_URL"] = "https://www.acme.test/chat"
    rt = request.getfixturevalue("acme")
    as_user(monkeypatch, rt, "boss@acme.test")
    shown = snippets(open_page())
    assert shown[0].startswith('<script src="https://www.acme.test/chat/widget.js" data-site-key="pk_')
    assert shown[0].endswith(' data-api="https://www.acme.test/chat" defer></script>')


def test_without_a_public_url_an_endpoint_on_every_address_asks_for_the_name(environ, monkeypatch, request):
    environ["COBERTURA_API_HOST"] = "0.0.0.0"
    rt = request.getfixturevalue("acme")
    as_user(monkeypatch, rt, "boss@acme.test")
    at = open_page()
    assert snippets(at)[0].startswith('<script src="http://YOUR-SERVER:8300/widget.js"')
    assert "or set COBERTURA_PUBLIC_URL to it" in texts(at)
