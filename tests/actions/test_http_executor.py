"""The tenant HTTP actions executor (core/actions/http.py) against a real local HTTP server (uvicorn in a thread)
that records every request it receives: what is sent (URL, quoting, body, headers, the secret, Idempotency-Key),
what comes back (JSON, text, refusals, the 64 KB cap) and every way the exchange can fail, with the secret never in
anything the executor returns, raises or logs."""
from __future__ import annotations

import asyncio
import json
import logging
import time
from urllib.parse import unquote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from core.actions import definitions
from core.actions.http import HttpExecutor, quote_segment, render_request, timeout_of
from core.actions.model import ActionFault, Execution
from core.base.config import load_settings
from tests.servers import free_port, in_thread

SECRET = "s3cr3t-Shop-Token-0042"
BIG = 200 * 1024


class Recorder:
    """What the server received, one dict per request: method, raw path, decoded path, query, headers, body."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    async def record(self, request: Request) -> dict:
        seen = {"method": request.method, "raw_path": request.scope["raw_path"].decode(),
                "path": request.url.path, "query": request.scope["query_string"].decode(),
                "headers": {k.lower(): v for k, v in request.headers.items()},
                "body": (await request.body()).decode()}
        self.requests.append(seen)
        return seen


def shop_app(recorder: Recorder) -> Starlette:
    async def echo(request: Request) -> Response:
        return JSONResponse(await recorder.record(request))

    async def status(request: Request) -> Response:
        seen = await recorder.record(request)
        code = int(request.path_params["code"])
        if request.query_params.get("as") == "text":
            return PlainTextResponse(f"upstream said {code}", status_code=code)
        return JSONResponse({"error": {"code": "refused", "message": "El pedido 1002 ya ha salido del almacén.",
                                       "you_sent": seen["headers"].get("authorization", "")}}, status_code=code)

    async def sleep(request: Request) -> Response:
        await recorder.record(request)
        await asyncio.sleep(float(request.query_params.get("s", "3")))
        return JSONResponse({"late": True})

    async def drip(request: Request) -> Response:
        await recorder.record(request)

        async def slowly():
            for _ in range(15):
                yield b" "
                await asyncio.sleep(0.3)
            yield b"{}"
        return StreamingResponse(slowly(), media_type="application/json")

    async def text(request: Request) -> Response:
        await recorder.record(request)
        return PlainTextResponse("Hola: el pedido está en reparto.")

    async def big(request: Request) -> Response:
        await recorder.record(request)
        size = int(request.query_params.get("n", str(BIG)))
        return Response(json.dumps({"pad": "x" * (size - 11)}), media_type="application/json")

    async def empty(request: Request) -> Response:
        await recorder.record(request)
        return Response(status_code=204)

    async def redirect(request: Request) -> Response:
        await recorder.record(request)
        return Response(status_code=302, headers={"Location": f"/elsewhere?token={SECRET}"})

    async def state(request: Request) -> Response:
        seen = await recorder.record(request)
        number = request.path_params["number"]
        if number == "list":
            return JSONResponse([1, 2])
        if number == "missing":
            return JSONResponse({"error": {"message": "No hay ningún pedido."}}, status_code=404)
        return JSONResponse({"pedido": number, "estado": "en preparación", "cliente": seen["headers"].get(
            "x-customer-id"), "echo": seen["headers"].get("authorization")})

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    return Starlette(routes=[
        Route("/echo/{rest:path}", echo, methods=methods), Route("/status/{code:int}", status, methods=methods),
        Route("/sleep", sleep, methods=methods), Route("/drip", drip), Route("/text", text), Route("/big", big),
        Route("/empty", empty, methods=methods), Route("/redirect", redirect, methods=methods),
        Route("/state/{number}", state)])


@pytest.fixture(scope="module")
def server():
    recorder = Recorder()
    with in_thread(shop_app(recorder)) as url:
        recorder.url = url
        yield recorder


@pytest.fixture
def shop(server):
    server.requests.clear()
    return server


@pytest.fixture
def settings(tmp_path, shop):
    return load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data"), "COBERTURA_PUBLIC_URL": shop.url})


def action(**changes):
    """An HTTP operation from a spec dict, checked by the same validation a tenant's definition goes through."""
    spec = {"name": "order_action", "title": "Cambiar la dirección", "description": "Test action.", "kind": "write",
            "method": "POST", "url": "{public_url}/echo/orders/{order_id}/address",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                            "direccion": {"type": "string"},
                                                            "lang": {"type": "string"}},
                           "required": ["order_id"]}}
    spec.update(changes)
    return definitions.operation_of(definitions.validate({k: v for k, v in spec.items() if v is not None}))


def secured(**changes):
    return action(auth_header="Authorization", auth_env="SHOP_TOKEN", **changes)


def run(settings, op, params, customer="cust-1", key="card-1", environ=None, factory=None) -> Execution:
    executor = HttpExecutor(settings, client_factory=factory, environ={} if environ is None else environ)
    try:
        return executor.execute(None, op, params, customer, key)
    finally:
        executor.close()


def state_of(settings, op, params, environ=None, customer="c"):
    executor = HttpExecutor(settings, environ={} if environ is None else environ)
    try:
        return executor.current_state(None, op, params, customer)
    finally:
        executor.close()


# == what is sent ===============================================================================================
def test_a_post_puts_url_params_in_the_path_and_the_rest_in_a_json_body(settings, shop):
    result = run(settings, action(), {"order_id": "1001", "direccion": "Calle Mayor 5, Madrid", "lang": "es"})
    assert result.ok and result.status == "ok" and result.message == ""
    [seen] = shop.requests
    assert seen["method"] == "POST" and seen["raw_path"] == "/echo/orders/1001/address" and seen["query"] == ""
    assert json.loads(seen["body"]) == {"direccion": "Calle Mayor 5, Madrid", "lang": "es"}
    assert seen["headers"]["content-type"] == "application/json"
    assert result.body["raw_path"] == "/echo/orders/1001/address"  # the JSON answer, parsed


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_put_and_patch_send_a_json_body_too(settings, shop, method):
    assert run(settings, action(method=method), {"order_id": "7", "direccion": "x" * 9}).ok
    assert shop.requests[0]["method"] == method and json.loads(shop.requests[0]["body"]) == {"direccion": "x" * 9}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_send_the_rest_as_a_query_string(settings, shop, method):
    op = action(method=method, kind="read", identified_only=False, url="{public_url}/echo/orders/{order_id}")
    assert run(settings, op, {"order_id": "1001", "lang": "pt br", "direccion": "a&b=c"}).ok
    [seen] = shop.requests
    assert seen["method"] == method and seen["raw_path"] == "/echo/orders/1001" and seen["body"] == ""
    assert sorted(seen["query"].split("&")) == ["direccion=a%26b%3Dc", "lang=pt+br"]


@pytest.mark.parametrize("value", ["../admin", "..", ".", "../../etc/passwd", "a?b=c", "x#frag", "a b", "%2e%2e",
                                   "ñ/é", "a/../../b", "?", "#", "/"])
def test_a_hostile_parameter_stays_inside_its_path_segment(settings, shop, value):
    result = run(settings, action(), {"order_id": value, "direccion": "Calle Mayor 5"})
    assert result.ok, result
    [seen] = shop.requests  # one request, to the action's own route, whatever the value
    assert seen["raw_path"] == f"/echo/orders/{quote_segment(value)}/address" and seen["query"] == ""
    segments = seen["raw_path"].split("/")
    assert len(segments) == 5 and segments[:3] == ["", "echo", "orders"] and segments[4] == "address"
    assert unquote(segments[3]) == value


@pytest.mark.parametrize("value, quoted", [("1001", "1001"), ("../x", "..%2Fx"), ("..", "%2E%2E"), (".", "%2E"),
                                           ("a.b", "a.b"), ("a b?#", "a%20b%3F%23"), ("ñ", "%C3%B1"), ("%", "%25")])
def test_quote_segment(value, quoted):
    assert quote_segment(value) == quoted


def test_the_customer_id_fills_url_and_header_templates(settings, shop):
    op = action(url="{public_url}/echo/customers/{customer_id}/orders/{order_id}",
                headers={"X-Customer-Id": "{customer_id}", "X-Order": "order {order_id}"})
    assert run(settings, op, {"order_id": "1001", "direccion": "Calle Mayor 5"}, customer="demo/customer 1").ok
    [seen] = shop.requests
    assert seen["raw_path"] == "/echo/customers/demo%2Fcustomer%201/orders/1001"
    assert seen["headers"]["x-customer-id"] == "demo/customer 1" and seen["headers"]["x-order"] == "order 1001"
    assert json.loads(seen["body"]) == {"direccion": "Calle Mayor 5"}  # order_id went into the URL and a header


def test_an_action_naming_the_customer_does_not_run_without_one(settings, shop):
    result = run(settings, action(headers={"X-Customer-Id": "{customer_id}"}), {"order_id": "1"}, customer=None)
    assert (result.ok, result.status) == (False, "not_identified") and "identified customer" in result.message
    assert shop.requests == []


@pytest.mark.parametrize("customer, params", [("cust\r\nX-Evil: 1", {"order_id": "1"}),
                                              ("cust", {"order_id": "1\nX-Evil: 1"})])
def test_a_line_break_never_reaches_a_header(settings, shop, customer, params):
    op = action(headers={"X-Customer-Id": "{customer_id}", "X-Order": "{order_id}"})
    result = run(settings, op, params, customer=customer)
    assert (result.ok, result.status) == (False, "invalid_params") and "line break" in result.message
    assert shop.requests == []


def test_a_missing_url_parameter_is_named(settings, shop):
    result = run(settings, action(), {"direccion": "Calle Mayor 5"})
    assert (result.ok, result.status) == (False, "invalid_params") and "order_id" in result.message
    assert shop.requests == []


def test_every_execution_carries_its_idempotency_key(settings, shop):
    executor = HttpExecutor(settings, environ={})
    for key in ("card-41", "card-42", "card-42"):
        assert executor.execute(None, action(), {"order_id": "1"}, "c", key).ok
    executor.close()
    assert [r["headers"]["idempotency-key"] for r in shop.requests] == ["card-41", "card-42", "card-42"]


# == the secret =================================================================================================
def test_the_auth_header_comes_from_the_named_variable_read_at_each_call(settings, shop):
    environ = {"SHOP_TOKEN": SECRET}
    executor = HttpExecutor(settings, environ=environ)
    first = executor.execute(None, secured(), {"order_id": "1"}, "c", "card-1")
    environ["SHOP_TOKEN"] = "rotated-token-0043"
    second = executor.execute(None, secured(), {"order_id": "1"}, "c", "card-2")
    executor.close()
    assert first.ok and second.ok
    assert [r["headers"]["authorization"] for r in shop.requests] == [f"Bearer {SECRET}", "Bearer rotated-token-0043"]
    assert SECRET not in repr(first) and "***" in first.body["headers"]["authorization"]  # the echo is scrubbed


def test_a_custom_auth_header_and_value(settings, shop):
    op = action(auth_header="X-Api-Key", auth_value="Token {secret}", auth_env="SHOP_TOKEN")
    assert run(settings, op, {"order_id": "1"}, environ={"SHOP_TOKEN": SECRET}).ok
    assert shop.requests[0]["headers"]["x-api-key"] == f"Token {SECRET}"
    assert "authorization" not in shop.requests[0]["headers"]


@pytest.mark.parametrize("environ", [{}, {"SHOP_TOKEN": ""}, {"SHOP_TOKEN": "  "}, {"OTHER": SECRET}])
def test_a_missing_secret_stops_the_action_before_any_request(settings, shop, environ):
    result = run(settings, secured(), {"order_id": "1"}, environ=environ)
    assert (result.ok, result.status) == (False, "config_error")
    assert "SHOP_TOKEN" in result.message and "set SHOP_TOKEN" in result.message
    with pytest.raises(ActionFault, match="SHOP_TOKEN"):
        state_of(settings, secured(state_url="{public_url}/state/1"), {"order_id": "1"}, environ)
    assert shop.requests == []


def test_the_secret_is_in_nothing_the_executor_returns_raises_or_logs(settings, shop, caplog):
    caplog.set_level(logging.INFO)  # httpx logs each request line at INFO (httpcore's DEBUG wire trace is opt-in)
    caplog.set_level(logging.DEBUG, logger="cobertura.actions.http")
    environ = {"SHOP_TOKEN": SECRET}
    seen: list = []
    ops = [secured(), secured(url="{public_url}/status/401"), secured(url="{public_url}/status/500?as=text"),
           secured(url="{public_url}/redirect"), secured(url="{public_url}/sleep?s=2", timeout=1),
           secured(url=f"http://127.0.0.1:{free_port()}/nothing")]
    for op in ops:
        seen.append(run(settings, op, {"order_id": "1"}, environ=environ))
    state_op = secured(state_url="{public_url}/state/{order_id}")
    executor = HttpExecutor(settings, environ=environ)
    seen.append(executor.current_state(None, state_op, {"order_id": "1001"}, "c"))
    for number in ("missing", "list"):
        with pytest.raises(ActionFault) as fault:
            executor.current_state(None, state_op, {"order_id": number}, "c")
        seen.append(str(fault.value))
    executor.close()
    seen.append(render_request(state_op, {"order_id": "1"}, "c", settings, environ))
    assert [s.status for s in seen[:6]] == ["ok", "http_401", "http_500", "http_302", "timeout", "unreachable"]
    assert all(SECRET in r["headers"].get("authorization", "") for r in shop.requests)  # it was really sent
    assert SECRET not in repr(seen) and SECRET not in caplog.text
    assert seen[1].body["error"]["you_sent"] == "Bearer ***" and "/elsewhere?token=***" in seen[3].message


# == what comes back ============================================================================================
def test_a_refusal_keeps_the_body_and_says_what_the_service_said(settings, shop):
    result = run(settings, action(url="{public_url}/status/409"), {"order_id": "1"})
    assert (result.ok, result.status) == (False, "http_409")
    assert result.body["error"]["code"] == "refused"
    assert "HTTP 409" in result.message and "El pedido 1002 ya ha salido del almacén" in result.message
    assert result.message.count(". ") == 0  # one sentence


def test_a_server_error_says_to_try_later(settings, shop):
    result = run(settings, action(url="{public_url}/status/503?as=text"), {"order_id": "1"})
    assert (result.ok, result.status, result.body) == (False, "http_503", {"text": "upstream said 503"})
    assert "HTTP 503" in result.message and "try again later" in result.message


def test_a_redirect_is_not_followed(settings, shop):
    result = run(settings, action(url="{public_url}/redirect"), {"order_id": "1"})
    assert (result.ok, result.status) == (False, "http_302") and len(shop.requests) == 1
    assert "redirect" in result.message


def test_a_text_answer_comes_back_as_text(settings, shop):
    result = run(settings, action(method="GET", kind="read", url="{public_url}/text"), {"order_id": "1"})
    assert result.ok and result.body == {"text": "Hola: el pedido está en reparto."}


def test_an_empty_answer_is_none(settings, shop):
    result = run(settings, action(url="{public_url}/empty"), {"order_id": "1"})
    assert (result.ok, result.status, result.body) == (True, "ok", None)


def test_an_answer_is_capped_at_64_kb(settings, shop):
    result = run(settings, action(method="GET", kind="read", url="{public_url}/big"), {"order_id": "1"})
    assert result.ok and result.body["truncated"] is True and len(result.body["text"].encode()) == 64 * 1024
    assert "64 KB" in result.message
    just = run(settings, action(method="GET", kind="read", url="{public_url}/big?n=65536"), {"order_id": "1"})
    assert just.ok and len(just.body["pad"]) == 65536 - 11 and just.message == ""


# == failing exchanges ==========================================================================================
def test_a_server_that_does_not_answer_in_time_is_a_timeout(settings, shop):
    started = time.monotonic()
    result = run(settings, action(url="{public_url}/sleep?s=3", timeout=1), {"order_id": "1"})
    assert (result.ok, result.status, result.body) == (False, "timeout", None)
    assert time.monotonic() - started < 2.5 and len(shop.requests) == 1
    assert "within 1 second;" in result.message and "not known whether the change was made" in result.message


def test_the_time_limit_is_for_the_whole_answer_not_each_read(settings, shop):
    started = time.monotonic()
    result = run(settings, action(method="GET", kind="read", url="{public_url}/drip", timeout=1), {"order_id": "1"})
    assert result.status == "timeout" and time.monotonic() - started < 2.5  # the drip lasts 4.5 s
    assert "not known" not in result.message  # a read changes nothing


def test_timeouts_default_to_10_and_stop_at_30():
    assert [timeout_of(c) for c in ({}, {"timeout": 5}, {"timeout": 99}, {"timeout": 0}, {"timeout": "x"})] == [
        10.0, 5.0, 30.0, 10.0, 10.0]


def test_a_server_nobody_runs_is_unreachable(settings, shop):
    result = run(settings, action(url=f"http://127.0.0.1:{free_port()}/orders/{{order_id}}"), {"order_id": "1"})
    assert (result.ok, result.status) == (False, "unreachable")
    assert result.message.endswith(".") and result.message.count(";") == 1 and "could not be reached" in result.message


def test_the_client_factory_builds_one_client_per_executor(settings, shop):
    built = []

    def factory():
        built.append(httpx.Client())
        return built[-1]

    executor = HttpExecutor(settings, client_factory=factory, environ={})
    assert all(executor.execute(None, action(), {"order_id": "1"}, "c", f"card-{n}").ok for n in range(3))
    executor.close()
    assert len(built) == 1 and built[0].is_closed and len(shop.requests) == 3


# == the state ==================================================================================================
def test_the_state_read_gets_the_state_url_with_the_headers_and_the_secret(settings, shop):
    op = secured(headers={"X-Customer-Id": "{customer_id}"}, state_url="{public_url}/state/{order_id}")
    executor = HttpExecutor(settings, environ={"SHOP_TOKEN": SECRET})
    state = executor.current_state(None, op, {"order_id": "1001", "direccion": "Calle Mayor 5"}, "cust-9")
    executor.close()
    assert state == {"pedido": "1001", "estado": "en preparación", "cliente": "cust-9", "echo": "Bearer ***"}
    [seen] = shop.requests
    assert (seen["method"], seen["raw_path"], seen["query"], seen["body"]) == ("GET", "/state/1001", "", "")
    assert seen["headers"]["authorization"] == f"Bearer {SECRET}"


def test_an_operation_without_a_state_url_has_no_state(settings, shop):
    assert state_of(settings, action(), {"order_id": "1"}) is None
    assert shop.requests == []


@pytest.mark.parametrize("url, says", [("{public_url}/state/missing", "HTTP 404"),
                                       ("{public_url}/state/list", "JSON object"),
                                       ("{public_url}/text", "JSON object"),
                                       ("http://127.0.0.1:1/state", "could not be reached")])
def test_a_state_that_cannot_be_read_is_a_fault(settings, shop, url, says):
    with pytest.raises(ActionFault, match=says):
        state_of(settings, action(state_url=url), {"order_id": "1"})


# == the dry run ================================================================================================
def test_render_request_shows_the_request_with_the_secret_masked(settings):
    op = secured(headers={"X-Customer-Id": "{customer_id}"}, state_url="{public_url}/state/{order_id}")
    shown = render_request(op, {"order_id": "../1", "direccion": "Calle Mayor 5"}, "cust-1", settings,
                           {"SHOP_TOKEN": SECRET})
    assert shown["method"] == "POST" and shown["url"] == f"{settings.endpoint_url}/echo/orders/..%2F1/address"
    assert shown["headers"]["Authorization"] == "Bearer ***" and shown["headers"]["X-Customer-Id"] == "cust-1"
    assert shown["body"] == {"direccion": "Calle Mayor 5"} and shown["warnings"] == []
    assert shown["state_url"] == f"{settings.endpoint_url}/state/..%2F1" and SECRET not in repr(shown)


def test_render_request_warns_about_what_is_missing_instead_of_failing(settings):
    op = secured(url="{public_url}/echo/{customer_id}/{order_id}", method="GET", kind="read", identified_only=True)
    shown = render_request(op, {"order_id": "1001", "lang": "es"}, None, settings, {})
    assert shown["url"].startswith(f"{settings.endpoint_url}/echo/") and shown["url"].endswith("/1001?lang=es")
    assert shown["body"] is None and shown["headers"]["Authorization"] == "Bearer ***"
    assert any("SHOP_TOKEN" in w for w in shown["warnings"]) and any("{customer_id}" in w for w in shown["warnings"])
    with pytest.raises(ActionFault, match="order_id"):
        render_request(op, {}, "c", settings, {})
