"""Schemathesis over the published OpenAPI schema: generated requests to every operation, with and without
valid credentials, never get a server error, and every response matches the schema (status code, content
type, body)."""
from __future__ import annotations

import hypothesis
import pytest
import schemathesis
from hypothesis import given
from schemathesis import GenerationMode, checks

from tests.api.test_chat import Api, acme  # noqa: F401  (the fixture)

ADMIN_TOKEN = "schema-test-admin-token"
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]
EXAMPLES = 25
OPERATIONS = ["POST /v1/chat", "GET /v1/conversations/{conversation_id}/replies",
              "POST /v1/conversations/{conversation_id}/turns/{turn_id}/feedback", "GET /v1/admin/questions",
              "GET /v1/admin/turns", "GET /", "GET /v1/health", "GET /widget.js", "GET /demo",
              "POST /v1/cards/{card_id}/approve", "POST /v1/cards/{card_id}/reject", "GET /v1/booking/availability",
              "POST /v1/booking/holds", "DELETE /v1/booking/holds/{hold_id}",
              "POST /v1/booking/holds/{hold_id}/confirm"]


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Api(rt, {"COBERTURA_ADMIN_TOKEN": ADMIN_TOKEN})
    yield client
    client.close()


def operations(api) -> dict:
    schema = schemathesis.openapi.from_asgi("/openapi.json", api.app)
    return {op.label: op for op in (result.ok() for result in schema.get_all_operations())}


def test_the_schema_lists_every_operation(api):
    assert sorted(operations(api)) == sorted(OPERATIONS)


#: Operations that take parameters or a body, so that invalid ones can be generated for them.
WITH_INPUT = ["POST /v1/chat", "GET /v1/conversations/{conversation_id}/replies",
              "POST /v1/conversations/{conversation_id}/turns/{turn_id}/feedback", "GET /v1/admin/questions",
              "GET /v1/admin/turns", "GET /v1/booking/availability", "POST /v1/booking/holds",
              "POST /v1/booking/holds/{hold_id}/confirm"]  # the cards' routes take any card id (a malformed one: 404)
CASES = ([(label, GenerationMode.POSITIVE) for label in OPERATIONS]
         + [(label, GenerationMode.NEGATIVE) for label in WITH_INPUT])


@pytest.mark.parametrize("label, mode", CASES, ids=[f"{mode.value}-{label}" for label, mode in CASES])
@pytest.mark.parametrize("credentials", [False, True], ids=["as-generated", "valid-credentials"])
def test_generated_requests_never_break_the_server(api, label, credentials, mode):
    """Valid data must be handled; invalid data (wrong types, missing fields) must be refused with a 4xx."""
    operation = operations(api)[label]
    valid = {"X-Site-Key": api.key("acme"), "Authorization": f"Bearer {ADMIN_TOKEN}"}
    calls = []

    @given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    def run(case):
        headers = None
        if credentials:
            headers = {**(case.headers or {}), **valid}
            if case.query and "tenant" in case.query:
                case.query["tenant"] = "acme"
        response = case.call_and_validate(headers=headers, checks=CHECKS)
        calls.append(response.status_code)

    run()
    assert calls and all(code < 500 for code in calls)
