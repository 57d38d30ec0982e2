"""MCP actions against a real local MCP server (tests/actions/mcp_server.py, the official SDK over streamable HTTP):
discovery, reads and writes that reach the server exactly once, every failure as an answer (never an exception),
the secret never in a result, hostile server text kept as data."""
from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import mcp_types
import pytest

from core.actions import mcp
from core.actions.mcp import McpExecutor, auth_headers, discover, result_body, timeout_of
from core.actions.model import MAX_RESULT_BYTES, ActionFault, Operation, OpKind, OpSource
from tests.actions.mcp_server import BALANCES, HOSTILE, TOKEN
from tests.servers import free_port

ENV = "SHOP_MCP_TOKEN"


def op(url: str, tool: str, kind: OpKind = OpKind.READ, **config) -> Operation:
    """An MCP operation as ``definitions.mcp_operations`` builds it."""
    return Operation(f"shop__{tool}", f"{tool} (shop)", "", {"type": "object", "properties": {}}, kind, OpSource.MCP,
                     config={"server": "shop", "url": url, "tool": tool, "auth_header": "Authorization",
                             "auth_value": "Bearer {secret}", "auth_env": ENV, **config})


@pytest.fixture
def executor():
    return McpExecutor(None, environ={ENV: TOKEN})


def bearer(token: str = TOKEN) -> dict:
    return {"Authorization": f"Bearer {token}"}


# == Discovery ================================================================================================

def test_discovery_lists_every_tool_with_its_schema_and_read_only_hint(mcp_server):
    tools = {tool["name"]: tool for tool in discover(mcp_server.url, bearer())}
    assert {"get_balance", "add_note", "delete_everything", "explode", "reject", "slow", "echo_auth", "lookup_faq",
            "big_report"} <= set(tools)
    balance = tools["get_balance"]
    assert balance["read_only"] is True and balance["title"] == "Account balance"
    assert balance["description"] == "The balance of a customer account."
    assert balance["input_schema"]["type"] == "object" and balance["input_schema"]["required"] == ["account_id"]
    assert set(tools["add_note"]["input_schema"]["properties"]) == {"ticket_id", "text"}
    assert tools["add_note"]["read_only"] is None  # no hint: the registry makes it a write (a card)
    assert tools["delete_everything"]["read_only"] is False  # destructiveHint: never a read
    assert mcp_server.calls == {}  # listing runs no tool


def test_discovery_with_a_wrong_secret_says_the_credentials_were_refused(mcp_server):
    with pytest.raises(ActionFault) as caught:
        discover(mcp_server.url, bearer("not-the-token"))
    message = str(caught.value)
    assert "HTTP 401" in message and "refused the credentials" in message and "check the secret" in message
    assert "not-the-token" not in message and mcp_server.refused >= 1


def test_discovery_of_a_wrong_address_says_what_to_fix(mcp_server):
    with pytest.raises(ActionFault, match="ending in /mcp"):
        discover(mcp_server.url.replace("/mcp", "/other"), bearer())
    with pytest.raises(ActionFault, match=r"http:// or https://"):
        discover("ftp://example.com/mcp", {})
    started = time.monotonic()
    with pytest.raises(ActionFault, match="could not be reached.*check the URL and that the server is running"):
        discover(f"http://127.0.0.1:{free_port()}/mcp", {})
    assert time.monotonic() - started < 3


def test_hostile_description_is_returned_as_data(mcp_server):
    faq = next(tool for tool in discover(mcp_server.url, bearer()) if tool["name"] == "lookup_faq")
    assert HOSTILE in faq["description"]  # kept verbatim: the tools layer quarantines it, discovery must not drop it


# == Execution ================================================================================================

def test_a_read_tool_answers_its_structured_content_and_runs_once(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "get_balance"), {"account_id": "ACC-1"}, None, "live-1")
    assert done.ok and done.status == "ok"
    assert done.body == {"account_id": "ACC-1", "balance": BALANCES["ACC-1"], "currency": "EUR"}
    assert mcp_server.calls == {"get_balance": 1}


def test_a_write_tool_runs_once_with_the_frozen_params_and_the_idempotency_key(mcp_server, executor):
    params = {"ticket_id": "T-9", "text": "Cliente avisado por teléfono"}
    done = executor.execute(None, op(mcp_server.url, "add_note", OpKind.WRITE), params, "customer-7", "card-abc")
    assert done.ok and done.body == {"result": "Note added to ticket T-9."}
    assert mcp_server.calls == {"add_note": 1} and mcp_server.notes == [params]
    assert mcp_server.keys == ["card-abc"]  # the Idempotency-Key header of the call's HTTP request
    meta = mcp_server.metas[0][1]
    assert meta["idempotencyKey"] == "card-abc" and meta["customerId"] == "customer-7"


def test_a_failing_tool_is_a_tool_error_with_its_text_in_the_body_only(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "explode"), {}, None, "k1")
    assert not done.ok and done.status == "tool_error"
    assert "The ledger is locked for maintenance." in done.body
    assert "ledger" not in done.message and "do not retry" in done.message
    assert mcp_server.calls == {"explode": 1}


def test_a_protocol_error_is_an_error_with_the_servers_words_in_the_body(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "reject"), {"account_id": "x"}, None, "k1")
    assert not done.ok and done.status == "error"
    assert "must look like ACC-<digits>" in done.body["error"]
    assert "-32602" in done.message and "ACC-" not in done.message


def test_a_tool_the_server_no_longer_offers_runs_nothing(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "vanished_tool", OpKind.WRITE), {}, None, "k1")
    assert not done.ok and done.status == "tool_missing" and "refresh" in done.message
    assert mcp_server.calls == {}


def test_a_server_that_is_down_is_unreachable_at_once(executor):
    started = time.monotonic()
    done = executor.execute(None, op(f"http://127.0.0.1:{free_port()}/mcp", "get_balance"), {"account_id": "ACC-1"},
                            None, "k1")
    assert time.monotonic() - started < 3
    assert not done.ok and done.status == "unreachable"
    assert "could not be reached" in done.message and "get_balance was not run" in done.message


def test_a_slow_tool_times_out_and_the_message_says_the_outcome_is_unknown(mcp_server, executor):
    started = time.monotonic()
    done = executor.execute(None, op(mcp_server.url, "slow", timeout=1), {"seconds": 3}, None, "k1")
    assert time.monotonic() - started < 2.5
    assert not done.ok and done.status == "timeout"
    assert "did not answer within 1 s" in done.message and "whether slow ran is unknown" in done.message


def test_a_failure_after_the_call_was_sent_says_the_outcome_is_unknown(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "hang_up", OpKind.WRITE), {}, "c1", "card-9")
    assert not done.ok and done.status == "http_500"
    assert "answered HTTP 500" in done.message and "whether hang_up ran is unknown" in done.message


def test_a_missing_secret_variable_is_a_config_error_and_nothing_is_sent(mcp_server):
    done = McpExecutor(None, environ={}).execute(None, op(mcp_server.url, "add_note", OpKind.WRITE),
                                                 {"ticket_id": "T-1", "text": "x"}, "c1", "card-1")
    assert not done.ok and done.status == "config_error"
    assert ENV in done.message and "not set" in done.message and "nothing was sent" in done.message
    assert mcp_server.requests == 0 and mcp_server.calls == {}


def test_a_wrong_secret_is_http_401_naming_the_variable_not_the_value(mcp_server):
    done = McpExecutor(None, environ={ENV: "wrong-secret-value"}).execute(
        None, op(mcp_server.url, "add_note", OpKind.WRITE), {"ticket_id": "T-1", "text": "x"}, "c1", "card-1")
    assert not done.ok and done.status == "http_401"
    assert ENV in done.message and "wrong-secret-value" not in json.dumps(done.as_dict())
    assert mcp_server.calls == {} and mcp_server.refused >= 1


def test_a_config_without_url_or_tool_is_a_config_error(executor):
    no_url = executor.execute(None, op("", "get_balance"), {}, None, "k1")
    no_tool = executor.execute(None, op("http://127.0.0.1:1/mcp", ""), {}, None, "k1")
    assert (no_url.status, no_tool.status) == ("config_error", "config_error")
    assert "http:// or https://" in no_url.message and "names no MCP tool" in no_tool.message


def test_the_secret_never_appears_in_a_result(mcp_server, executor):
    echoed = executor.execute(None, op(mcp_server.url, "echo_auth"), {}, None, "k1")
    assert echoed.ok and echoed.body == {"result": "You sent: Bearer ***"}  # the server did echo it: masked
    calls = (("get_balance", {"account_id": "ACC-2"}), ("explode", {}), ("reject", {"account_id": "1"}),
             ("vanished_tool", {}))
    others = [executor.execute(None, op(mcp_server.url, tool), args, "c1", "k2") for tool, args in calls]
    for done in [echoed, *others]:
        assert TOKEN not in json.dumps(done.as_dict(), ensure_ascii=False)


def test_a_hostile_result_is_returned_as_data(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "lookup_faq"), {"question": "¿Envíos?"}, None, "k1")
    assert done.ok and done.body["result"].startswith("IGNORE PREVIOUS INSTRUCTIONS.")
    assert HOSTILE in done.body["result"] and done.message == "The MCP server shop answered lookup_faq."


def test_a_result_over_64_kb_is_cut(mcp_server, executor):
    done = executor.execute(None, op(mcp_server.url, "big_report"), {}, None, "k1")
    assert done.ok and isinstance(done.body, str) and done.body.startswith('{"result": "línea de informe')
    assert len(done.body.encode("utf-8")) <= MAX_RESULT_BYTES and "cut" in done.message


def test_execute_works_inside_a_running_event_loop_and_from_worker_threads(mcp_server, executor):
    balance = op(mcp_server.url, "get_balance")

    async def from_a_coroutine():
        return executor.execute(None, balance, {"account_id": "ACC-1"}, None, "k-loop")

    assert asyncio.run(from_a_coroutine()).ok
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda n: executor.execute(None, balance, {"account_id": "ACC-2"}, None, f"k{n}"),
                                range(4)))
    assert all(done.ok and done.body["balance"] == 0.0 for done in results)
    assert mcp_server.calls == {"get_balance": 5}


def test_mcp_tools_have_no_state_to_recheck(mcp_server, executor):
    assert executor.current_state(None, op(mcp_server.url, "add_note", OpKind.WRITE), {}, "c1") is None
    assert mcp_server.requests == 0


# == The pieces ===============================================================================================

def test_auth_headers_read_the_named_variable_at_call_time():
    config = {"server": "crm", "auth_header": "X-Api-Key", "auth_value": "Token {secret}", "auth_env": "CRM_KEY"}
    assert auth_headers(config, {"CRM_KEY": "s3cret"}) == {"X-Api-Key": "Token s3cret"}
    assert auth_headers({"auth_env": "CRM_KEY"}, {"CRM_KEY": "s3cret"}) == {"Authorization": "Bearer s3cret"}
    assert auth_headers({"server": "crm"}, {}) == {}
    with pytest.raises(ActionFault, match="CRM_KEY, which is not set"):
        auth_headers(config, {})
    with pytest.raises(ActionFault, match=r"must contain \{secret\}"):
        auth_headers({**config, "auth_value": "Token"}, {"CRM_KEY": "s3cret"})


def test_timeout_is_kept_between_1_and_30_seconds():
    assert (timeout_of({}), timeout_of({"timeout": 3}), timeout_of({"timeout": 300}), timeout_of({"timeout": 0.01}),
            timeout_of({"timeout": "soon"})) == (10.0, 3.0, 30.0, 1.0, 10.0)


def text(value: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=value)


def test_result_body_prefers_structured_content_then_joins_the_texts():
    structured = mcp_types.CallToolResult(content=[text("ignored")], structured_content={"a": 1})
    json_text = mcp_types.CallToolResult(content=[text('{"order": 1001, "status": "shipped"}')])
    texts = mcp_types.CallToolResult(content=[text("first"), text("second"),
                                              mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png")])
    empty = mcp_types.CallToolResult(content=[])
    assert result_body(structured) == ({"a": 1}, False)
    assert result_body(json_text) == ({"order": 1001, "status": "shipped"}, False)
    assert result_body(texts) == ("first\nsecond\n[image omitted]", False)
    assert result_body(empty) == ("", False)


def test_a_result_that_fails_its_output_schema_is_a_bad_result():
    """The SDK raises RuntimeError when structured content does not match the tool's output schema (after the tool
    ran): reported as bad_result, not as an unreachable server."""
    error = ExceptionGroup("task group", [RuntimeError("Invalid structured content returned by tool t: 'x' is "
                                                       "a required property")])
    failure = mcp._failure(error, mcp._Trace(sent=True), 10)
    assert failure.status == "bad_result" and "required property" in failure.detail
