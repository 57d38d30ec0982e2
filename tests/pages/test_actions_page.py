"""The Actions page (operations, HTTP actions, MCP servers, the actions switch), driven through Streamlit's AppTest.

HTTP actions run against a real local shop server (uvicorn in a thread, counting what it receives); MCP servers
against the real local MCP server of ``tests/actions/mcp_server.py``. No other network."""
from __future__ import annotations

import json
import threading

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from streamlit.testing.v1 import AppTest

from core.actions import definitions, switch
from core.actions.builtin import profile, save_profile
from core.actions.model import OpKind
from core.tenancy.context import local_customer, local_operator
from core.tenancy.tenants import create_tenant
from pages.display import sentence
from tests.actions.mcp_server import TOKEN as MCP_TOKEN, mcp_test_server
from tests.apptest import frame, signed_in
from tests.servers import in_thread

PAGE = "pages/actions.py"
SECRET = "shop-secret-8d41c0ffee"
ENV = "ACME_SHOP_TOKEN"
ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{4}$"}},
                "required": ["order_id"]}


class Shop:
    """A shop API that counts every request: GET an order, its state, POST a new address (needs the bearer key)."""

    def __init__(self) -> None:
        self.lock, self.requests = threading.Lock(), []
        self.app = Starlette(routes=[Route("/orders/{order_id}", self.order),
                                     Route("/orders/{order_id}/state", self.state),
                                     Route("/orders/{order_id}/address", self.address, methods=["POST"])])

    def _seen(self, request) -> bool:
        with self.lock:
            self.requests.append((request.method, request.url.path, request.headers.get("authorization")))
        return request.headers.get("authorization") == f"Bearer {SECRET}"

    async def order(self, request):
        if not self._seen(request):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return JSONResponse({"order_id": request.path_params["order_id"], "status": "shipped", "carrier": "SEUR"})

    async def state(self, request):
        self._seen(request)
        return JSONResponse({"status": "processing"})

    async def address(self, request):
        self._seen(request)
        return JSONResponse({"ok": True})


@pytest.fixture
def shop():
    server = Shop()
    with in_thread(server.app) as url:
        server.url = url
        yield server


@pytest.fixture
def acme(runtime, monkeypatch):
    monkeypatch.setenv(ENV, SECRET)
    create_tenant(runtime.store, "acme", "Acme")
    yield runtime, local_operator(runtime.store, "acme")
    close_executors(runtime)


def close_executors(rt) -> None:
    """The HTTP executor keeps its client (and a kept-alive socket to the shop) until closed; the runtime's close
    does not close it."""
    for executor in rt.actions.registry.executors.values():
        getattr(executor, "close", lambda: None)()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(store, role: str = "admin") -> AppTest:
    at = signed_in(store, "acme", role)
    ok(at.run())
    return ok(at.switch_page(PAGE).run())


def click(at: AppTest, key: str) -> AppTest:
    return ok(at.button(key=key).click().run())


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error", "title")
                     for e in getattr(at, kind)).replace("\\", "")


def flat(node) -> list:
    """Every element of the page in the order it is drawn."""
    children = getattr(node, "children", None)
    if children is None:
        return [node]
    return [leaf for _, child in sorted(children.items()) for leaf in flat(child)]


def right_after(at: AppTest, key: str):
    """The element drawn right after the widget ``key`` (where the page puts that field's error)."""
    elements = flat(at.main)
    at_key = next(n for n, e in enumerate(elements) if getattr(e, "key", None) == key)
    return elements[at_key + 1]


def fill(at: AppTest, **values) -> AppTest:
    for name, value in values.items():
        if name == "kind":
            at.radio(key="act_kind").set_value(value)
        elif name == "method":
            at.selectbox(key="act_method").set_value(value)
        elif name in ("description", "parameters", "examples", "headers", "state_schema"):
            at.text_area(key=f"act_{name}").set_value(value)
        else:
            at.text_input(key=f"act_{name}").set_value(value)
    return at


def order_status(shop_url: str, **more) -> dict:
    return {"name": "order_status", "title": "Order status", "description": "The status of one order.",
            "kind": "read", "method": "GET", "url": f"{shop_url}/orders/{{order_id}}", "parameters": ORDER_SCHEMA,
            "examples": ["¿Dónde está mi pedido 1001?"], "auth_header": "Authorization", "auth_env": ENV, **more}


def test_the_table_lists_the_operations_and_shows_the_schema_of_the_one_picked(acme, shop):
    rt, ctx = acme
    definitions.save_http_action(ctx, rt.store, order_status(shop.url))
    at = open_page(rt.store)
    table = frame(at, "Identified only")
    assert list(table.columns) == ["Name", "Title", "Kind", "Source", "Identified only", "Enabled"]
    rows = {row["Name"]: row for row in table.to_dict("records")}
    assert rows["update_contact_email"] == {"Name": "update_contact_email", "Title": "Update my contact e-mail",
                                            "Kind": "write", "Source": "built-in", "Identified only": True,
                                            "Enabled": True}
    assert (rows["order_status"]["Kind"], rows["order_status"]["Source"]) == ("read", "HTTP")
    assert at.selectbox(key="act_op").value == "update_contact_email"
    assert at.json[0].value == json.dumps(rt.actions.operation(ctx, "update_contact_email").parameters)
    assert "- `Change my e-mail address to name@example.com`" in texts(at)
    at.selectbox(key="act_op").set_value("order_status").run()
    assert json.loads(at.json[0].value) == ORDER_SCHEMA
    assert f"**Request** (secret from `{ENV}`)" in texts(at)
    assert [c.value for c in at.code] == [f"GET {shop.url}/orders/{{order_id}}"]
    assert shop.requests == []  # showing an operation calls nothing


def test_a_bad_parameters_schema_shows_the_error_beside_the_field_and_stores_nothing(acme, shop):
    rt, ctx = acme
    at = open_page(rt.store)
    fill(at, name="order_status", title="Order status", description="The status of one order.",
         url=f"{shop.url}/orders/{{order_id}}", parameters='{"type": "object", "properties": {')
    click(at, "act_save")
    error = right_after(at, "act_parameters")
    assert error.type == "error" and error.value.startswith("parameters is not valid JSON (Expecting")
    assert definitions.http_actions(ctx, rt.store) == []
    at.text_area(key="act_parameters").set_value(
        '{"type": "object", "properties": {"order_id": {"type": "strin"}}}')  # JSON, but not a JSON Schema
    click(at, "act_save")
    error = right_after(at, "act_parameters")
    assert error.type == "error" and "parameters is not a valid JSON Schema" in error.value
    assert "Nothing was stored." in error.value and len(at.error) == 1
    assert definitions.http_actions(ctx, rt.store) == []
    fill(at, auth_header="Authorization", auth_env="not a variable")  # another field's error sits beside that one
    at.text_area(key="act_parameters").set_value(json.dumps(ORDER_SCHEMA))
    click(at, "act_save")
    error = right_after(at, "act_auth_env")
    assert error.type == "error" and "auth_env must name an environment variable (A-Z, 0-9, _)" in error.value
    assert not right_after(at, "act_parameters").type == "error" and len(at.error) == 1
    assert definitions.http_actions(ctx, rt.store) == []
    fill(at, auth_env=ENV)
    click(at, "act_save")
    assert not at.error and "Saved `order_status` (read)" in texts(at)
    [saved] = definitions.http_actions(ctx, rt.store)
    assert (saved.name, saved.parameters, saved.config["auth_env"]) == ("order_status", ORDER_SCHEMA, ENV)
    assert SECRET not in json.dumps(definitions.http_spec(ctx, rt.store, "order_status"))
    assert "order_status" in set(frame(at, "Identified only")["Name"])


def test_the_form_says_whether_the_secret_variable_is_set_never_its_value(acme, shop, monkeypatch):
    rt, ctx = acme
    at = open_page(rt.store)
    at.text_input(key="act_auth_env").set_value(ENV).run()
    assert f"`{ENV}` is set in the server's environment (its value is never shown or stored)." in texts(at)
    at.text_input(key="act_auth_env").set_value("ACME_MISSING_TOKEN").run()
    assert "`ACME_MISSING_TOKEN` is **not set** in the server's environment" in texts(at)
    assert SECRET not in texts(at)
    assert "The secret itself is never entered or stored here" in texts(at)


def test_an_action_is_edited_then_deleted(acme, shop):
    rt, ctx = acme
    definitions.save_http_action(ctx, rt.store, order_status(shop.url))
    at = open_page(rt.store)
    at.selectbox(key="act_choose").set_value("order_status").run()
    assert at.text_input(key="act_title").value == "Order status" and at.text_input(key="act_name").disabled
    assert json.loads(at.text_area(key="act_parameters").value) == ORDER_SCHEMA
    at.text_input(key="act_title").set_value("Where is my order")
    at.text_area(key="act_examples").set_value("¿Dónde está mi pedido 1001?\nWhere is my order 1001?")
    click(at, "act_save")
    op = rt.actions.operation(ctx, "order_status")
    assert op.title == "Where is my order" and op.examples == ("¿Dónde está mi pedido 1001?", "Where is my order 1001?")
    assert at.button(key="act_delete").disabled
    at.checkbox(key="act_delete_sure_order_status").check().run()
    click(at, "act_delete")
    assert rt.actions.operation(ctx, "order_status") is None
    assert "Deleted `order_status`" in texts(at) and at.selectbox(key="act_choose").value == ""


def test_import_is_all_or_nothing(acme, shop):
    rt, ctx = acme
    at = open_page(rt.store)
    good = [order_status(shop.url), {**order_status(shop.url), "name": "order_state", "title": "Order state"}]
    bad = [*good, {**order_status(shop.url), "name": "broken", "timeout": 99}]
    at.file_uploader(key="act_upload").set_value(("actions.json", json.dumps(bad).encode(), "application/json")).run()
    click(at, "act_import")
    [error] = at.error
    assert error.value.startswith("Nothing was imported: Action 3 ('broken'): timeout must be seconds")
    assert definitions.http_actions(ctx, rt.store) == []
    at.file_uploader(key="act_upload").set_value(("actions.json", json.dumps(good).encode(), "application/json")).run()
    click(at, "act_import")
    assert "Imported 2 actions: `order_status`, `order_state`." in texts(at)
    assert [op.name for op in definitions.http_actions(ctx, rt.store)] == ["order_state", "order_status"]


def test_a_dry_run_shows_the_request_with_the_secret_masked_and_executes_nothing(acme, shop):
    rt, ctx = acme
    definitions.save_http_action(ctx, rt.store, {
        **order_status(shop.url), "name": "change_address", "title": "Change the delivery address", "kind": "write",
        "method": "POST", "url": f"{shop.url}/orders/{{order_id}}/address", "state_url": f"{shop.url}/orders/"
        "{order_id}/state", "parameters": {**ORDER_SCHEMA, "properties": {**ORDER_SCHEMA["properties"],
                                                                          "address": {"type": "string"}}}})
    at = open_page(rt.store)
    at.selectbox(key="act_op").set_value("change_address").run()
    assert not [b for b in at.button if b.key == "act_run"]  # a write never runs from here
    at.text_area(key="act_params_change_address").set_value('{"order_id": "1001", "address": "Calle Mayor 1"}')
    click(at, "act_dry_run")
    assert [c.value for c in at.code][-1] == f"POST {shop.url}/orders/1001/address"  # the request as it would go
    assert json.loads(at.json[-3].value) == {"headers": {
        "Accept": "application/json", "User-Agent": "Cobertura-actions/1", "Authorization": "Bearer ***",
        "Idempotency-Key": "card-<id> (the card's id, on every execution)"}, "body": {"address": "Calle Mayor 1"}}
    assert json.loads(at.json[-2].value) == {"status": "processing"}  # the current state
    shown = json.loads(at.json[-1].value)  # everything, in the expander
    assert shown["request"]["method"] == "POST" and shown["request"]["url"] == f"{shop.url}/orders/1001/address"
    assert shown["request"]["headers"]["Authorization"] == "Bearer ***"
    assert shown["request"]["body"] == {"address": "Calle Mayor 1"} and shown["state"] == {"status": "processing"}
    assert SECRET not in json.dumps([e.value for e in at.json]) and SECRET not in texts(at)
    assert [r[:2] for r in shop.requests] == [("GET", "/orders/1001/state")]  # the state read; no POST
    at.text_area(key="act_params_change_address").set_value('{"order_id": "10x"}')
    click(at, "act_dry_run")
    assert [e.value for e in at.error] == ["change_address: order_id: '10x' does not match '^[0-9]{4}$'"]
    assert len(shop.requests) == 1  # refused before anything was read


def test_run_shows_the_live_result_of_a_read(acme, shop):
    rt, ctx = acme
    definitions.save_http_action(ctx, rt.store, order_status(shop.url))
    at = open_page(rt.store)
    at.selectbox(key="act_op").set_value("order_status").run()
    at.text_area(key="act_params_order_status").set_value('{"order_id": "1001"}')
    click(at, "act_run")
    assert at.success[0].value.startswith("**ok**")
    assert json.loads(at.json[-1].value) == {"order_id": "1001", "status": "shipped", "carrier": "SEUR"}
    assert shop.requests == [("GET", "/orders/1001", f"Bearer {SECRET}")]
    at.text_area(key="act_params_order_status").set_value('{"order_id": ')
    click(at, "act_run")
    assert at.error[0].value.startswith("The parameters are not valid JSON") and len(shop.requests) == 1


def test_an_editor_sees_everything_read_only_and_may_test(acme, shop):
    rt, ctx = acme
    definitions.save_http_action(ctx, rt.store, order_status(shop.url))
    at = open_page(rt.store, "editor")
    assert "order_status" in set(frame(at, "Identified only")["Name"])
    assert "Only an admin defines, edits and deletes actions; you see them read-only." in texts(at)
    assert at.button(key="act_save").disabled and at.button(key="act_import").disabled
    assert all(w.disabled for w in at.text_input if str(w.key).startswith("act_") and w.key != "act_customer")
    assert all(w.disabled for w in at.text_area if w.key != "act_params_update_contact_email")
    assert not [b for b in at.button if b.key in ("act_switch_off", "act_switch_on", "act_delete", "mcp_connect_go")]
    at.selectbox(key="act_choose").set_value("order_status").run()
    assert at.text_input(key="act_title").value == "Order status"
    assert not [b for b in at.button if b.key == "act_delete"]
    at.selectbox(key="act_op").set_value("order_status").run()
    at.text_area(key="act_params_order_status").set_value('{"order_id": "1001"}')
    click(at, "act_run")
    assert json.loads(at.json[-1].value)["status"] == "shipped"


def test_qa_does_not_see_the_page(acme):
    rt, _ = acme
    at = signed_in(rt.store, "acme", "qa")
    ok(at.run())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(PAGE)


def test_the_actions_switch_stops_and_restarts_this_tenant(acme):
    rt, ctx = acme
    at = open_page(rt.store)
    assert "**Actions are on.**" in texts(at)
    at.text_input(key="act_switch_reason").set_value("migrating the shop API")
    click(at, "act_switch_off")
    assert not [w for w in at.text_input if w.key == "act_switch_reason"]  # while off: only the way back on
    assert rt.actions.stopped(ctx) is not None
    off = switch.actions_off(ctx, rt.store)
    assert (off["changed_by"], off["reason"]) == ("admin@acme.test", "migrating the shop API")
    assert ":red[**Actions are switched OFF for this tenant**] by admin@acme.test" in texts(at)
    assert "(migrating the shop API)" in texts(at)
    click(at, "act_switch_on")
    assert rt.actions.stopped(ctx) is None and "Actions are on again." in texts(at)


@pytest.fixture
def killed(environ):
    environ["COBERTURA_KILL_SWITCH"] = "1"  # before the runtime opens (``acme`` after this fixture)


def test_the_global_kill_switch_is_a_banner(killed, acme):
    rt, ctx = acme
    at = open_page(rt.store, "editor")
    assert at.error[0].value.startswith("**COBERTURA_KILL_SWITCH is on for this server:**")
    assert f":orange[**Actions are stopped:**] {sentence(rt.actions.stopped(ctx))}" in texts(at)


def test_an_mcp_server_connects_and_its_tools_take_the_admins_choices(acme, monkeypatch):
    rt, ctx = acme
    monkeypatch.setenv("ACME_MCP_TOKEN", MCP_TOKEN)
    with mcp_test_server() as server:
        at = open_page(rt.store)
        at.text_input(key="mcp_name_0").set_value("shop")
        at.text_input(key="mcp_url_0").set_value(server.url)
        at.text_input(key="mcp_auth_env_0").set_value("ACME_MISSING_TOKEN")
        click(at, "mcp_connect_go")
        assert "ACME_MISSING_TOKEN, which is not set" in at.error[0].value and server.requests == 0
        at.text_input(key="mcp_auth_env_0").set_value("ACME_MCP_TOKEN")
        click(at, "mcp_connect_go")
        kinds = {op.name: op.kind for op in rt.actions.operations(ctx) if op.name.startswith("shop__")}
        assert len(kinds) > 5 and f"Connected **shop**: {len(kinds)} tools." in texts(at)
        assert at.text_input(key="mcp_name_1").value == "" and at.text_input(key="mcp_auth_env_1").value == ""
        assert kinds["shop__get_balance"] == OpKind.READ and kinds["shop__add_note"] == OpKind.WRITE
        assert at.selectbox(key="mcp_kind_shop__get_balance").value == ""  # as the server says
        at.selectbox(key="mcp_kind_shop__add_note").set_value("read").run()
        at.toggle(key="mcp_on_shop__delete_everything").set_value(False).run()
        ops = {op.name: op for op in rt.actions.operations(ctx)}
        assert ops["shop__add_note"].kind == OpKind.READ and not ops["shop__delete_everything"].enabled
        click(at, "mcp_refresh_shop")
        assert f"Refreshed **shop**: {len(kinds)} tools (your kind and enabled choices are kept)." in texts(at)
        ops = {op.name: op for op in rt.actions.operations(ctx)}
        assert ops["shop__add_note"].kind == OpKind.READ and not ops["shop__delete_everything"].enabled
        assert server.calls == {}  # connecting lists the tools; it calls none
        assert MCP_TOKEN not in texts(at)


def test_a_dry_run_as_a_customer_reads_that_customers_state_and_changes_nothing(acme):
    rt, ctx = acme
    customer = local_customer(rt.store, "acme", "cust-1")
    save_profile(customer, rt.store, "cust-1", email="ana@ejemplo.com")
    at = open_page(rt.store)
    at.text_area(key="act_params_update_contact_email").set_value('{"new_email": "ana.nueva@ejemplo.com"}')
    at.text_input(key="act_customer").set_value("cust-1")
    click(at, "act_dry_run")
    assert json.loads(at.json[-2].value) == {"email": "ana@ejemplo.com"}  # the state a card would freeze
    assert profile(customer, rt.store, "cust-1")["email"] == "ana@ejemplo.com"
    assert rt.store.query("SELECT COUNT(*) AS n FROM cards")[0]["n"] == 0
