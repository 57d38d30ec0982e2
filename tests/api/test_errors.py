"""Every refusal of core reaches an API client in the one envelope, with the message written for people."""
from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.errors import install
from core.channels.conversations import ConversationError
from core.tenancy.context import AuthError


def client() -> TestClient:
    app = FastAPI()
    install(app)

    @app.get("/refused")
    def refused():
        raise ConversationError("No conversation 'x'. Start a new one (omit the conversation id).")

    @app.get("/forbidden")
    def forbidden():
        raise AuthError("The private logs are for admins only.")

    @app.get("/crash")
    def crash():
        raise RuntimeError("secret internals")

    return TestClient(app, raise_server_exceptions=False)


def test_a_user_error_that_no_route_mapped_is_a_400_with_its_message():
    response = client().get("/refused")
    assert response.status_code == 400
    assert response.json() == {"error": {"code": "invalid_request", "retryable": False,
                                         "message": "No conversation 'x'. Start a new one (omit the conversation id)."}}


def test_a_permission_refusal_is_a_403_and_a_fault_of_ours_stays_a_500_without_internals():
    assert client().get("/forbidden").status_code == 403
    crashed = client().get("/crash")
    assert crashed.status_code == 500 and "internals" not in crashed.text
