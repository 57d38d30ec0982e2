"""The demo page loads the widget next to itself, and names the endpoint (data-api) when COBERTURA_PUBLIC_URL puts
it under a proxy's path, where the widget could not guess it from its script's origin."""
from __future__ import annotations

import pytest

from core.tenancy.tenants import create_tenant
from tests.api.test_chat import Api


@pytest.mark.parametrize("public, api", [("", ""), ("https://chat.acme.test", ""),
                                         ("https://www.acme.test/chat/", "https://www.acme.test/chat")])
def test_the_demo_page_names_the_endpoint_only_under_a_path(rt, ctx, public, api):
    create_tenant(rt.store, "demo", "Demo")
    client = Api(rt, {"COBERTURA_PUBLIC_URL": public})
    try:
        page = client.client.get("/demo").text
    finally:
        client.close()
    assert f'<script src="widget.js" data-site-key="{client.key("demo")}" data-api="{api}" defer></script>' in page


def test_the_demo_page_signs_in_a_demo_customer_and_only_those(rt, ctx):
    from core.tenancy import site_keys
    from core.tenancy.context import local_operator

    create_tenant(rt.store, "demo", "Demo")
    client = Api(rt, {})
    try:
        anonymous = client.client.get("/demo").text
        signed = client.client.get("/demo", params={"customer": "demo-customer-1"}).text
        stranger = client.client.get("/demo", params={"customer": "someone-else"})
    finally:
        client.close()
    assert "data-customer-token" not in anonymous
    token = signed.split('data-customer-token="', 1)[1].split('"', 1)[0]
    secret = site_keys.ensure(local_operator(rt.store, "demo"), rt.store).secret
    assert site_keys.verify_customer_token(secret, token) == "demo-customer-1"
    assert stranger.status_code == 404 and stranger.json()["error"]["code"] == "no_demo_customer"
