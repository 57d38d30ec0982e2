"""While the endpoint runs, the outbox is delivered on its own: a message waiting for its retry goes out without a
new booking (B5)."""
from __future__ import annotations

import time

from fastapi.testclient import TestClient

from api.app import create_app
from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.booking.smtp_server import Inbox, smtp_server
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder


def test_the_running_endpoint_delivers_the_outbox_every_round(tmp_path):
    inbox = Inbox()
    with smtp_server(inbox) as port:
        settings = load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data"), "COBERTURA_SMTP_HOST": "127.0.0.1",
                                  "COBERTURA_SMTP_PORT": str(port), "COBERTURA_SMTP_SECURITY": "none",
                                  "COBERTURA_SMTP_FROM": "citas@example.com"})
        rt = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING)
        create_tenant(rt.store, "shop", "Shop")
        ctx = local_operator(rt.store, "shop")
        row = rt.booking.outbox.enqueue(ctx, "confirmation", "ana@example.com", "Cita confirmada", "Hola")
        assert rt.booking.outbox.message(ctx, row["id"])["status"] == "pending"
        with TestClient(create_app(runtime=rt, outbox_every=0.2)):
            deadline = time.monotonic() + 10
            while rt.booking.outbox.message(ctx, row["id"])["status"] != "sent" and time.monotonic() < deadline:
                time.sleep(0.1)
        assert rt.booking.outbox.message(ctx, row["id"])["status"] == "sent"
        assert [m["Subject"] for m in inbox.messages] == ["Cita confirmada"]
        rt.close()

