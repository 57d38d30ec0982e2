"""The commands of operations and cards end to end, through ``python -m core``'s ``main`` on a fresh data dir: the
widget's keys, asking as an identified customer, the cards and their ledger, HTTP actions against a real local
server, an MCP server's tools, and the actions switch."""
from __future__ import annotations

import json
import re

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from core.__main__ import main
from core.actions import builtin
from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy import site_keys
from core.tenancy.context import local_customer, local_operator
from tests.actions.mcp_server import TOKEN as MCP_TOKEN
from tests.fakes import HashEmbedder
from tests.servers import in_thread

ASKED = "Cambia mi e-mail de contacto a nuevo@example.com"
SHOP_SECRET = "shop-secret-4b1e7d"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tenants", "create", "acme", "--name", "Acme"]) == 0
    assert main(["tenants", "create", "globex", "--name", "Globex"]) == 0
    return tmp_path / "data"


@pytest.fixture
def rt(data_dir):
    """A runtime on the same data dir as the commands (the hashing embedder: it only reads and proposes)."""
    runtime = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(data_dir)}), embedder=HashEmbedder())
    yield runtime
    runtime.close()


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def propose(rt, customer: str = "alice", email: str = "nuevo@example.com", slug: str = "acme") -> str:
    """A card as an identified customer's turn records it (what the write tool leaves); its id."""
    ctx = local_customer(rt.store, slug, customer)
    op = rt.actions.operation(ctx, builtin.UPDATE_EMAIL)
    params = {"new_email": email}
    state = rt.actions.executor(op).current_state(ctx, op, params, customer)
    [card] = rt.actions.record(ctx, "conv-1", [{"operation": op.name, "title": op.title, "params": params,
                                                "preview": [{"label": "contact e-mail", "before": state["email"],
                                                             "value": email}], "snapshot": state}])
    return card.id


def email_of(rt, customer: str = "alice") -> str:
    found = builtin.profile(local_operator(rt.store, "acme"), rt.store, customer)
    return found["email"] if found else ""


# -- widget ---------------------------------------------------------------------------------------------------
def test_widget_shows_the_keys_and_signs_a_token_the_endpoint_accepts(data_dir, capsys):
    code, out, _ = run(capsys, "widget", "acme", "--json")
    keys = json.loads(out)
    assert code == 0 and keys["public_key"].startswith("pk_") and keys["secret"].startswith("whsec_")
    assert f'data-site-key="{keys["public_key"]}"' in keys["snippet"]
    code, out, _ = run(capsys, "widget", "acme")
    assert code == 0 and keys["secret"] in out and "HS256" in out and "data-customer-token" in out
    assert "python -m core widget acme --token CUSTOMER_ID" in out
    code, out, _ = run(capsys, "widget", "acme", "--token", "alice", "--ttl", "600")
    assert code == 0 and site_keys.verify_customer_token(keys["secret"], out.strip()) == "alice"
    code, out, _ = run(capsys, "widget", "acme", "--token", "bob", "--json")
    assert site_keys.verify_customer_token(keys["secret"], json.loads(out)["token"]) == "bob"
    code, _, err = run(capsys, "widget", "acme", "--token", "alice", "--ttl", "0")
    assert code == 2 and "between 1 second and 7 days" in err
    code, _, err = run(capsys, "widget", "nope")
    assert code == 2 and "python -m core tenants" in err


# -- ask as a customer, then the cards --------------------------------------------------------------------------
def test_ask_as_a_customer_prints_the_card_and_approve_executes_it_once(data_dir, rt, capsys):
    code, out, _ = run(capsys, "ask", "acme", ASKED, "--customer", "alice")
    assert code == 0 and out.startswith("[card] ")
    card_id = re.search(r"^CARD (c[0-9a-f]+): Cambiar mi e-mail de contacto \(update_contact_email\), proposed",
                        out, re.M).group(1)
    assert "e-mail de contacto: (none) -> nuevo@example.com" in out
    assert f"approve: python -m core cards approve acme {card_id}" in out
    assert email_of(rt) == ""  # nothing changes until someone approves
    code, out, _ = run(capsys, "cards", "acme")
    assert code == 0 and card_id in out and "proposed" in out and "customer alice, identified" in out
    code, out, _ = run(capsys, "cards", "acme", "--status", "executed", "--json")
    assert json.loads(out) == []

    code, out, _ = run(capsys, "cards", "approve", "acme", card_id)
    assert code == 0 and f"{card_id}: executed" in out and "The contact e-mail was changed." in out
    assert email_of(rt) == "nuevo@example.com"
    code, first, _ = run(capsys, "cards", "approve", "acme", card_id, "--json")
    code_again, again, _ = run(capsys, "cards", "approve", "acme", card_id, "--json")
    assert code == code_again == 0 and json.loads(first) == json.loads(again)
    assert json.loads(again)["repeated"] is True and json.loads(again)["card"]["status"] == "executed"
    code, out, _ = run(capsys, "cards", "reject", "acme", card_id)
    assert code == 1 and "consumed" in out and "card status executed" in out

    code, out, _ = run(capsys, "cards", "ledger", "acme", "--card", card_id)
    header, *rows = out.splitlines()
    assert header == "card_id,at,actor,channel,event,reason,detail"
    assert [row.split(",")[4] for row in rows] == ["proposed", "approved", "recheck", "executed", "repeated",
                                                   "repeated", "repeated"]
    code, out, _ = run(capsys, "cards", "acme", "--json")
    assert json.loads(out)[0]["status"] == "executed" and json.loads(out)[0]["customer_id"] == "alice"


def test_ask_json_carries_the_cards_and_an_anonymous_visitor_gets_none(data_dir, capsys):
    code, out, _ = run(capsys, "ask", "acme", ASKED, "--customer", "alice", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "card" and len(data["cards"]) == 1
    assert data["cards"][0]["params"] == {"new_email": "nuevo@example.com"}
    code, out, _ = run(capsys, "ask", "acme", ASKED)  # channel web: no write tool is even offered
    assert code == 0 and "CARD " not in out and not out.startswith("[card]")
    code, _, err = run(capsys, "ask", "acme", ASKED, "--customer", " ")
    assert code == 2 and "customer id" in err


def test_reject_then_approve_is_consumed_and_the_switch_stops_approved_cards(data_dir, rt, capsys):
    first = propose(rt)
    code, out, _ = run(capsys, "cards", "reject", "acme", first)
    assert code == 0 and f"{first}: rejected" in out
    code, out, _ = run(capsys, "cards", "approve", "acme", first)
    assert code == 1 and "consumed" in out and email_of(rt) == ""

    second = propose(rt, email="otro@example.com")
    code, out, _ = run(capsys, "actions", "switch", "acme", "off", "--reason", "maintenance")
    assert code == 0 and "no approved card executes" in out
    code, out, _ = run(capsys, "actions", "acme")
    assert "Actions are OFF" in out and "maintenance" in out
    code, out, _ = run(capsys, "cards", "approve", "acme", second)
    assert code == 1 and "refused" in out and "switched its actions off" in out and email_of(rt) == ""
    code, out, _ = run(capsys, "actions", "switch", "acme", "on", "--json")
    assert code == 0 and json.loads(out) == {"actions": "on", "stopped": None}
    code, _, err = run(capsys, "actions", "switch", "acme", "maybe")
    assert code == 2 and "on|off" in err


def test_cards_of_another_tenant_or_a_wrong_id_are_not_found(data_dir, rt, capsys):
    card_id = propose(rt)
    code, _, err = run(capsys, "cards", "approve", "globex", card_id)
    code_missing, _, err_missing = run(capsys, "cards", "approve", "acme", "c" + "0" * 20)
    assert code == code_missing == 2 and err == err_missing and "no such card" in err
    code, out, _ = run(capsys, "cards", "globex", "--json")
    assert json.loads(out) == []
    code, _, err = run(capsys, "cards", "approve", "acme")
    assert code == 2 and err.startswith("error: Usage: python -m core cards SLUG")
    code, _, err = run(capsys, "cards", "acme", "--status", "done")
    assert code == 2 and "Unknown card status" in err
    code, out, _ = run(capsys, "cards", "ledger", "acme")
    assert code == 0 and out.count(card_id) == 1  # the whole tenant's ledger: one proposal so far


def test_cards_help_explains_both_forms(capsys):
    with pytest.raises(SystemExit) as done:
        main(["cards", "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert "Without an action, `cards SLUG` lists" in out and "approve SLUG ID" in out and "ledger SLUG" in out
    assert "python -m core cards approve SLUG ID [--json]" in out


# -- HTTP actions -----------------------------------------------------------------------------------------------
@pytest.fixture
def shop():
    """A real local HTTP API of a shop that records every request it receives."""
    seen: list[dict] = []

    async def order(request: Request):
        seen.append({"method": request.method, "path": request.url.path, "headers": dict(request.headers)})
        return JSONResponse({"order_id": request.path_params["order_id"], "status": "processing"})

    app = Starlette(routes=[Route("/orders/{order_id}", order), Route("/orders/{order_id}/state", order),
                            Route("/orders/{order_id}/address", order, methods=["POST"])])
    with in_thread(app) as url:
        yield url, seen


def actions_file(tmp_path, url: str) -> str:
    order = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{4}$"}},
             "required": ["order_id"]}
    address = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{4}$"},
                                                "address": {"type": "string", "minLength": 5}},
               "required": ["order_id", "address"]}
    specs = [{"name": "order_status", "title": "Order status", "description": "The status of one order.",
              "kind": "read", "method": "GET", "url": url + "/orders/{order_id}", "parameters": order,
              "auth_header": "Authorization", "auth_env": "SHOP_TOKEN", "identified_only": False},
             {"name": "change_address", "title": "Change the delivery address", "description": "Change it.",
              "kind": "write", "method": "POST", "url": url + "/orders/{order_id}/address", "parameters": address,
              "state_url": url + "/orders/{order_id}/state", "auth_header": "Authorization",
              "auth_env": "SHOP_TOKEN"}]
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(specs), encoding="utf-8")
    return str(path)


def test_http_actions_import_test_dry_run_and_remove(data_dir, capsys, tmp_path, shop, monkeypatch):
    url, seen = shop
    monkeypatch.setenv("SHOP_TOKEN", SHOP_SECRET)
    code, out, _ = run(capsys, "actions", "import", "acme", actions_file(tmp_path, url))
    assert code == 0 and "2 action(s) saved" in out and seen == []
    code, out, _ = run(capsys, "actions", "acme", "--json")
    kinds = {op["name"]: (op["kind"], op["source"]) for op in json.loads(out)["operations"]}
    assert kinds == {"update_contact_email": ("write", "builtin"), "order_status": ("read", "http"),
                     "change_address": ("write", "http")}

    code, out, _ = run(capsys, "actions", "test", "acme", "order_status", "--params", '{"order_id": "1001"}')
    assert code == 0 and out.startswith("order_status: ok") and '"status": "processing"' in out
    [got] = seen
    assert got["method"] == "GET" and got["path"] == "/orders/1001"
    assert got["headers"]["authorization"] == f"Bearer {SHOP_SECRET}" and got["headers"]["idempotency-key"]

    code, out, _ = run(capsys, "actions", "test", "acme", "change_address", "--params",
                       '{"order_id": "1001", "address": "Calle Mayor 1, Madrid"}', "--dry-run")
    dry = json.loads(out)
    assert code == 0 and dry["request"]["method"] == "POST" and dry["request"]["url"] == url + "/orders/1001/address"
    assert dry["request"]["headers"]["Authorization"] == "Bearer ***" and SHOP_SECRET not in out
    assert dry["state"] == {"order_id": "1001", "status": "processing"}
    assert [r["method"] for r in seen] == ["GET", "GET"]  # the dry run read the state and sent nothing else
    code, _, err = run(capsys, "actions", "test", "acme", "change_address", "--params",
                       '{"order_id": "1001", "address": "Calle Mayor 1, Madrid"}')
    assert code == 2 and "only through a card" in err and len(seen) == 2

    for params, words in (("{order", "--params is not JSON"), ('["1001"]', "must be a JSON object"),
                          (None, "Give the parameters as a JSON object")):
        code, _, err = run(capsys, "actions", "test", "acme", "order_status", *(["--params", params] if params else []))
        assert code == 2 and words in err, err
    code, _, err = run(capsys, "actions", "test", "acme", "order_status", "--params", '{"order_id": "x"}')
    assert code == 2 and "order_id" in err and len(seen) == 2

    assert run(capsys, "actions", "rm", "acme", "order_status")[0] == 0
    code, _, err = run(capsys, "actions", "rm", "acme", "order_status")
    assert code == 2 and "no HTTP action 'order_status'" in err
    code, _, err = run(capsys, "actions", "test", "acme", "order_status", "--params", "{}")
    assert code == 2 and "no operation 'order_status'" in err


def test_an_import_with_one_wrong_action_stores_none(data_dir, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "fine_one", "title": "T", "description": "D", "kind": "read",
                                "method": "GET", "url": "https://x.example/{a}", "parameters": {
                                    "type": "object", "properties": {"a": {"type": "string"}}}},
                               {"name": "Bad Name"}]), encoding="utf-8")
    code, _, err = run(capsys, "actions", "import", "acme", str(bad))
    assert code == 2 and "Nothing was stored" in err
    code, out, _ = run(capsys, "actions", "acme", "--json")
    assert [op["name"] for op in json.loads(out)["operations"]] == ["update_contact_email"]
    code, _, err = run(capsys, "actions", "import", "acme", str(tmp_path / "missing.json"))
    assert code == 2 and "No file" in err


# -- MCP --------------------------------------------------------------------------------------------------------
def test_mcp_connect_then_override_a_tool_and_refresh_keeping_it(data_dir, capsys, mcp_server, monkeypatch):
    monkeypatch.setenv("MCP_TOKEN", MCP_TOKEN)
    code, out, _ = run(capsys, "mcp", "connect", "acme", "shop", mcp_server.url, "--auth-env", "MCP_TOKEN")
    assert code == 0, out
    assert re.search(r"^shop__get_balance\s.*\[read, mcp, enabled", out, re.M)
    assert re.search(r"^shop__add_note\s.*\[write, mcp, enabled", out, re.M)
    assert MCP_TOKEN not in out

    assert run(capsys, "mcp", "tool", "acme", "shop__add_note", "--kind", "read")[0] == 0
    assert run(capsys, "mcp", "tool", "acme", "shop__get_balance", "--disable")[0] == 0

    def ops() -> dict:
        return {op["name"]: op for op in json.loads(run(capsys, "actions", "acme", "--json")[1])["operations"]}

    assert ops()["shop__add_note"]["kind"] == "read" and ops()["shop__get_balance"]["enabled"] is False
    code, out, _ = run(capsys, "mcp", "refresh", "acme", "shop")
    assert code == 0 and ops()["shop__add_note"]["kind"] == "read" and ops()["shop__get_balance"]["enabled"] is False
    assert run(capsys, "mcp", "tool", "acme", "shop__get_balance", "--enable")[0] == 0
    assert ops()["shop__get_balance"]["enabled"] is True
    servers = json.loads(run(capsys, "actions", "acme", "--json")[1])["mcp_servers"]
    assert [(s["name"], s["auth_env"]) for s in servers] == [("shop", "MCP_TOKEN")]


def test_mcp_commands_refuse_what_they_cannot_do(data_dir, capsys, mcp_server, monkeypatch):
    monkeypatch.delenv("MCP_TOKEN", raising=False)
    code, _, err = run(capsys, "mcp", "connect", "acme", "shop", mcp_server.url, "--auth-env", "MCP_TOKEN")
    assert code == 2 and "MCP_TOKEN" in err and "not set" in err
    code, _, err = run(capsys, "mcp", "connect", "acme", "shop", mcp_server.url, "--auth-header", "X-Key")
    assert code == 2 and "--auth-env" in err
    code, _, err = run(capsys, "mcp", "refresh", "acme", "nope")
    assert code == 2 and "python -m core mcp connect acme nope URL" in err
    code, _, err = run(capsys, "mcp", "tool", "acme", "shop__add_note")
    assert code == 2 and "--kind read|write, or --disable, or --enable" in err
    code, _, err = run(capsys, "mcp", "tool", "acme", "nope__tool", "--disable")
    assert code == 2 and "no MCP tool 'nope__tool'" in err
    code, _, err = run(capsys, "mcp", "acme")
    assert code == 2 and err.startswith("error: Usage: python -m core mcp connect")
