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
