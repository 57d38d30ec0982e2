"""Defining operations (C4): an HTTP action is stored exactly as given or refused naming the field; an import is all or
nothing; MCP tools become operations with the admin's overrides; parameters are checked with JSON Schema."""
from __future__ import annotations

import json

import pytest

from core.actions import definitions, params
from core.actions.model import ActionDefinitionError, OpKind
from core.tenancy.context import AuthError, local_customer

ORDER = {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{4,8}$",
                                                       "title": "order number"}},
         "required": ["order_id"], "additionalProperties": False}


def spec(**over) -> dict:
    base = {"name": "order_status", "title": "Order status", "description": "The live status of an order.",
            "kind": "read", "method": "GET", "url": "https://shop.example/orders/{order_id}", "parameters": ORDER}
    return {**base, **over}


def test_a_valid_action_is_stored_with_the_documented_defaults_only(rt, ctx):
    op = definitions.save_http_action(ctx, rt.store, spec())
    assert op.kind is OpKind.READ and op.enabled and op.identified_only
    stored = definitions.http_spec(ctx, rt.store, "order_status")
    assert stored == {**spec(), "examples": [], "identified_only": True, "enabled": True, "headers": {}, "timeout": 10}
    assert [o.name for o in definitions.http_actions(ctx, rt.store)] == ["order_status"]


@pytest.mark.parametrize("change, field", [
    ({"name": "Order Status"}, "name"), ({"name": "update_contact_email"}, "built-in"),
    ({"kind": "delete"}, "kind"), ({"method": "TRACE"}, "method"), ({"url": "ftp://x/{order_id}"}, "url"),
    ({"url": "https://x/{order}"}, "{order}"), ({"parameters": {"type": "string"}}, "object"),
    ({"parameters": {"type": "object", "required": ["x"]}}, "required"),
    ({"parameters": {"type": "object", "properties": {"a": {"type": "bogus"}}}}, "JSON Schema"),
    ({"examples": "one"}, "examples"), ({"timeout": 300}, "timeout"), ({"identified_only": "yes"}, "identified_only"),
    ({"kind": "write", "identified_only": False}, "anonymous"), ({"auth_header": "Authorization"}, "auth_env"),
    ({"auth_header": "Authorization", "auth_env": "lower"}, "auth_env"),
    ({"auth_header": "X-Key", "auth_env": "KEY", "auth_value": "Bearer"}, "{secret}"),
    ({"auth_header": "X-Key", "auth_env": "KEY", "headers": {"x-key": "v"}}, "secret"),
    ({"state_schema": "estado"}, "state_schema"), ({"colour": "red"}, "colour"),
])
def test_a_wrong_field_is_refused_by_name_and_nothing_is_stored(rt, ctx, change, field):
    with pytest.raises(ActionDefinitionError, match=field) as err:
        definitions.save_http_action(ctx, rt.store, spec(**change))
    assert "Nothing was stored" in str(err.value)
    assert definitions.http_actions(ctx, rt.store) == []


def test_missing_fields_are_listed(rt, ctx):
    with pytest.raises(ActionDefinitionError, match="Missing field.*url, parameters"):
        definitions.save_http_action(ctx, rt.store, {k: v for k, v in spec().items() if k not in ("url", "parameters")})


def test_an_import_stores_every_action_or_none(rt, ctx):
    good, bad = spec(), spec(name="change_address", kind="write", method="POST", url="https://x/{nope}")
    with pytest.raises(ActionDefinitionError, match="Action 2 .'change_address'.*nope"):
        definitions.import_actions(ctx, rt.store, json.dumps([good, bad]))
    assert definitions.http_actions(ctx, rt.store) == []
    with pytest.raises(ActionDefinitionError, match="appears twice"):
        definitions.import_actions(ctx, rt.store, json.dumps([good, good]))
    with pytest.raises(ActionDefinitionError, match="not JSON"):
        definitions.import_actions(ctx, rt.store, "{name: order_status")
    assert [o.name for o in definitions.import_actions(ctx, rt.store, json.dumps(good))] == ["order_status"]


def test_only_admins_define_actions_and_tenants_do_not_see_each_others(rt, ctx, other_ctx):
    definitions.save_http_action(ctx, rt.store, spec())
    assert definitions.http_actions(other_ctx, rt.store) == []
    with pytest.raises(AuthError):
        definitions.save_http_action(local_customer(rt.store, "acme", "c1"), rt.store, spec(name="other_one"))
    definitions.delete_action(ctx, rt.store, "order_status")
    with pytest.raises(ActionDefinitionError, match="no HTTP action"):
        definitions.delete_action(ctx, rt.store, "order_status")


TOOLS = [{"name": "get_balance", "description": "Balance", "input_schema": ORDER, "read_only": True},
         {"name": "Add-Note", "description": "Adds a note", "input_schema": {"type": "object"}, "read_only": None},
         {"name": "broken", "description": "", "input_schema": {"type": "nonsense"}, "read_only": True}]


def test_mcp_tools_become_operations_read_only_hint_is_read_everything_else_write(rt, ctx):
    problems = definitions.connect_mcp(ctx, rt.store, "crm", "http://127.0.0.1:9/mcp", TOOLS)
    assert [p["tool"] for p in problems] == ["broken"]
    ops = {op.name: op for op in definitions.mcp_operations(ctx, rt.store)}
    assert ops["crm__get_balance"].kind is OpKind.READ and ops["crm__add_note"].kind is OpKind.WRITE
    assert not ops["crm__broken"].enabled  # an unusable schema is kept, switched off, and reported
    definitions.set_tool_override(ctx, rt.store, "crm__get_balance", kind="write")
    definitions.set_tool_override(ctx, rt.store, "crm__add_note", disabled=True)
    definitions.connect_mcp(ctx, rt.store, "crm", "http://127.0.0.1:9/mcp", TOOLS)  # a refresh keeps the choices
    ops = {op.name: op for op in definitions.mcp_operations(ctx, rt.store)}
    assert ops["crm__get_balance"].kind is OpKind.WRITE and not ops["crm__add_note"].enabled
    with pytest.raises(ActionDefinitionError, match="MCP tool"):
        definitions.save_http_action(ctx, rt.store, spec(name="crm__get_balance"))


def test_mcp_connection_checks_its_auth_settings(rt, ctx):
    with pytest.raises(ActionDefinitionError, match="both"):
        definitions.connect_mcp(ctx, rt.store, "crm", "http://127.0.0.1:9/mcp", [], auth_header="Authorization")
    with pytest.raises(ActionDefinitionError, match="http"):
        definitions.connect_mcp(ctx, rt.store, "crm", "file:///etc/passwd", [])


@pytest.mark.parametrize("arguments, missing, problem", [
    ({"order_id": " 1001 "}, (), None),
    ({}, ("order_id",), None),
    ({"order_id": ""}, ("order_id",), None),
    ({"order_id": "10"}, (), "does not match"),
    ({"order_id": "1001", "customer_id": "someone-else"}, (), None),  # unknown names never reach a card
    ("not a dict", ("order_id",), None),
])
def test_arguments_are_normalised_then_validated(arguments, missing, problem):
    checked = params.check(ORDER, arguments)
    assert checked.missing == missing
    assert (problem is None and not checked.problems) or any(problem in p for p in checked.problems)
    assert set(checked.params) <= {"order_id"}


def test_an_email_parameter_is_checked_and_its_domain_lowercased():
    schema = {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}, "required": ["e"]}
    assert params.check(schema, {"e": " Ana@Example.COM "}).params == {"e": "Ana@example.com"}
    assert params.check(schema, {"e": "not-an-address"}).problems
    assert params.check(schema, {"e": "a@b"}).problems
