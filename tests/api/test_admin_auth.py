"""The admin logs check the token before anything else (issue 16, item 13): every request under /v1/admin
without the right token answers 401 (403 while the logs are closed), never 404, 405, 422 or 500, whatever its
parameters. Before the fix ``GET /v1/admin/questions`` without the token and without ``tenant`` answered 422
listing the route's parameters."""
from __future__ import annotations

import pytest
from fastapi.routing import APIRoute

from tests.api.test_chat import Api, acme  # noqa: F401  (the fixture)

TOKEN = "s3cret-admin-token"
ODD_QUERIES = ["", "?tenant=acme", "?tenant=nope", "?tenant=", "?limit=abc", "?tenant=acme&limit=-5&before=x",
               "?status=nonsense", "?tenant=" + "x" * 500, "?tenant=acme&status=answered"]
NO_TOKEN = {"none": {}, "empty": {"Authorization": ""}, "wrong": {"Authorization": "Bearer wrong"},
            "not bearer": {"Authorization": f"Basic {TOKEN}"}, "bare token": {"Authorization": TOKEN},
            "bearer only": {"Authorization": "Bearer "}}
EXTRA_PATHS = ["/v1/admin", "/v1/admin/", "/v1/admin/nowhere", "/v1/admin/questions/1", "/v1/admin/../admin/turns"]


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Api(rt, {"COBERTURA_ADMIN_TOKEN": TOKEN})
    yield client
    client.close()


def api_routes(routes):
    """The app's routes, through the routers it includes (FastAPI >= 0.16x keeps them inside)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):
            yield from api_routes(route.original_router.routes)


def admin_routes(app) -> list[tuple[str, str]]:
    """Every (method, path) the app routes under /v1/admin, read from the app itself."""
    found = [(method, route.path) for route in api_routes(app.routes)
             if route.path.startswith("/v1/admin") for method in sorted(route.methods)]
    assert ("GET", "/v1/admin/questions") in found and ("GET", "/v1/admin/turns") in found
    return found


def requests(app):
    for method, path in admin_routes(app):
        concrete = path.replace("{rest:path}", "x/y")
        for query in ODD_QUERIES:
            yield method, concrete + query
    for path in EXTRA_PATHS:
        for method in ("GET", "POST", "DELETE", "PUT"):
            yield method, path


@pytest.mark.parametrize("credentials", NO_TOKEN, ids=list(NO_TOKEN))
def test_every_admin_request_without_the_token_is_401(api, credentials):
    seen = []
    for method, url in requests(api.app):
        response = api.client.request(method, url, headers=NO_TOKEN[credentials])
        seen.append((method, url, response.status_code))
        assert response.status_code == 401, (method, url, response.status_code, response.text)
        if method != "HEAD":
            assert response.json()["error"]["code"] in ("missing_admin_token", "wrong_admin_token")
            assert "tenant" not in response.json()["error"]["message"]  # nothing about the route's parameters
        assert response.headers["www-authenticate"] == "Bearer"
    assert len(seen) > 40


def test_with_the_logs_closed_every_admin_request_is_403(rt, acme):  # noqa: F811
    api = Api(rt)  # no COBERTURA_ADMIN_TOKEN
    for method, url in requests(api.app):
        for headers in ({}, {"Authorization": f"Bearer {TOKEN}"}):
            response = api.client.request(method, url, headers=headers)
            assert response.status_code == 403, (method, url, response.status_code)
            if method != "HEAD":
                assert response.json()["error"]["code"] == "logs_closed"
    api.close()


def test_with_the_token_the_parameters_are_checked_as_before(api):
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert api.client.get("/v1/admin/questions", headers=good).status_code == 422
    assert api.client.get("/v1/admin/questions?tenant=acme&limit=abc", headers=good).status_code == 422
    assert api.client.get("/v1/admin/questions?tenant=nope", headers=good).status_code == 404
    assert api.client.get("/v1/admin/questions?tenant=acme", headers=good).status_code == 200
    assert api.client.get("/v1/admin/nowhere", headers=good).status_code == 404
    wrong_method = api.client.post("/v1/admin/turns?tenant=acme", headers=good)
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "GET"
    assert api.client.head("/v1/admin/turns?tenant=acme", headers=good).status_code == 405


def test_the_catch_all_is_not_published(api):
    paths = api.client.get("/openapi.json").json()["paths"]
    assert sorted(p for p in paths if p.startswith("/v1/admin")) == ["/v1/admin/questions", "/v1/admin/turns"]
