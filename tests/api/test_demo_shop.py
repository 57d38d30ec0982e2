"""The demo shop (api/demo_shop.py) through the real app: seeded orders with dates counted from the shop's first use,
the customer check, the refusal after shipping, one change per Idempotency-Key (also under concurrency), the key of
COBERTURA_DEMO_SHOP_KEY, no shop without a demo tenant; and the two demo actions of data/sample/actions.json run by
the real HTTP executor against the app served on a loopback port."""
from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from datetime import datetime, timezone

import httpx
import pytest
from fastapi.testclient import TestClient

from api import create_app
from api.demo_shop import FILE_NAME
from core.actions import definitions, params
from core.actions.http import HttpExecutor
from core.actions.model import ActionFault
from core.base.config import load_settings
from core.demo import SAMPLE_DIR
from core.runtime import open_runtime
from core.tenancy.tenants import create_tenant
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, MovableClock
from tests.servers import in_thread

START = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
SHOP = "/demo-shop/v1/orders"
ONE, TWO = {"X-Customer-Id": "demo-customer-1"}, {"X-Customer-Id": "demo-customer-2"}
KEY = "demo-shop-key-for-tests"


@pytest.fixture
def clock():
    return MovableClock(START)


@pytest.fixture
def runtime(tmp_path, clock):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder(),
                      tuning=TEST_TUNING, clock=clock)
    yield rt
    rt.close()


def client_for(rt, **environ) -> TestClient:
    settings = load_settings({"COBERTURA_DATA_DIR": str(rt.settings.data_dir), **environ})
    return TestClient(create_app(settings, runtime=rt), raise_server_exceptions=False)


@pytest.fixture
def shop(runtime):
    create_tenant(runtime.store, "demo", "Lumen Bicicletas (demo)")
    with client_for(runtime) as client:
        yield client


def move(shop, number, address, customer=ONE, key=None, **headers):
    sent = {**customer, **headers, **({"Idempotency-Key": key} if key else {})}
    return shop.post(f"{SHOP}/{number}/address", json={"direccion": address}, headers=sent)


def state(shop, number, customer=ONE):
    response = shop.get(f"{SHOP}/{number}/state", headers=customer)
    assert response.status_code == 200, response.text
    return response.json()


# == no demo tenant =============================================================================================
def test_without_a_demo_tenant_there_is_no_shop(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    with client_for(runtime) as client:
        for response in (client.get(f"{SHOP}/1001"), client.get(f"{SHOP}/1001/state", headers=ONE),
                         move(client, "1001", "Calle Mayor 5, 28013 Madrid")):
            assert response.status_code == 404 and response.json()["error"]["code"] == "no_demo_shop"
            assert "python -m core init" in response.json()["error"]["message"]
    assert not (runtime.settings.data_dir / FILE_NAME).exists()


def test_the_shop_is_not_in_the_public_schema(shop):
    assert not [path for path in shop.get("/openapi.json").json()["paths"] if "demo-shop" in path]


# == the seeded orders ==========================================================================================
def test_the_seeded_orders_and_their_dates_count_from_the_first_use(shop, runtime):
    orders = {n: shop.get(f"{SHOP}/{n}").json() for n in ("1001", "1002", "1003", "1004")}
    assert (runtime.settings.data_dir / FILE_NAME).exists()
    assert {n: o["estado"] for n, o in orders.items()} == {
        "1001": "en preparación", "1002": "enviado", "1003": "entregado", "1004": "pendiente"}
    assert orders["1001"] == {"pedido": "1001", "estado": "en preparación", "transportista": "SEUR",
                              "articulos": ["Casco Lumen Urban (talla M)", "Luz trasera recargable USB"],
                              "fecha_pedido": "2026-11-30", "entrega_prevista": "2026-12-04",
                              "destino": "28009 Madrid"}
    assert orders["1002"]["seguimiento"] == "CE4410092637ES" and orders["1002"]["fecha_envio"] == "2026-11-29"
    assert orders["1002"]["entrega_prevista"] == "2026-12-01"
    assert orders["1003"]["entregado_el"] == "2026-11-23" and "entrega_prevista" not in orders["1003"]
    assert orders["1004"]["entrega_prevista"] == "2026-12-05"
    for order in orders.values():  # anyone with the number may read the status: no street, no customer
        assert "direccion" not in order and "cliente" not in order


def test_the_seeded_dates_stay_those_of_the_first_use(shop, clock):
    assert shop.get(f"{SHOP}/1001").json()["entrega_prevista"] == "2026-12-04"
    clock.advance(days=30)
    assert shop.get(f"{SHOP}/1001").json()["entrega_prevista"] == "2026-12-04"


@pytest.mark.parametrize("number", ["9999", "abc", "1001 ", "%2E%2E"])
def test_an_unknown_order_is_not_found(shop, number):
    response = shop.get(f"{SHOP}/{number}")
    assert response.status_code == 404 and response.json()["error"]["code"] == "order_not_found"


# == who asks ===================================================================================================
def test_the_state_is_only_for_the_customer_of_the_order(shop):
    assert state(shop, "1001") == {"pedido": "1001", "estado": "en preparación",
                                   "direccion": "Calle de Alcalá 120, 2º B, 28009 Madrid",
                                   "actualizado": "2026-11-30T10:00:00+00:00"}
    for headers, code in (({}, "customer_required"), (TWO, "not_your_order")):
        response = shop.get(f"{SHOP}/1001/state", headers=headers)
        assert response.status_code == 403 and response.json()["error"]["code"] == code


def test_another_customer_cannot_change_the_address(shop):
    response = move(shop, "1001", "Calle Mayor 5, 28013 Madrid", customer=TWO, key="k-1")
    assert response.status_code == 403 and response.json()["error"]["code"] == "not_your_order"
    assert "no es de este cliente" in response.json()["error"]["message"]
    assert move(shop, "1001", "Calle Mayor 5, 28013 Madrid", customer={}).status_code == 403
    assert state(shop, "1001")["direccion"] == "Calle de Alcalá 120, 2º B, 28009 Madrid"


# == the change =================================================================================================
def test_the_customer_changes_the_address_of_an_unshipped_order(shop, clock):
    clock.advance(minutes=5)
    response = move(shop, "1004", "  Calle Mayor 5,\n 28013 Madrid ", customer=TWO, key="card-1")
    assert response.status_code == 200 and "idempotent-replayed" not in response.headers
    assert response.json() == {"pedido": "1004", "estado": "pendiente", "direccion": "Calle Mayor 5, 28013 Madrid",
                               "actualizado": "2026-12-01T10:05:00+00:00",
                               "direccion_anterior": "Calle Larios 7, 29005 Málaga",
                               "mensaje": "Nueva dirección de entrega del pedido 1004: Calle Mayor 5, 28013 Madrid."}
    assert state(shop, "1004", TWO)["direccion"] == "Calle Mayor 5, 28013 Madrid"
    assert shop.get(f"{SHOP}/1004").json()["destino"] == "28013 Madrid"


@pytest.mark.parametrize("number, status", [("1002", "enviado"), ("1003", "entregado")])
def test_an_order_that_has_shipped_keeps_its_address(shop, number, status):
    customer = ONE if number == "1002" else TWO
    before = state(shop, number, customer)
    response = move(shop, number, "Calle Mayor 5, 28013 Madrid", customer=customer, key="k-9")
    assert response.status_code == 409 and response.json()["error"]["code"] == "order_shipped"
    assert f"estado: {status}" in response.json()["error"]["message"]
    assert state(shop, number, customer) == before


def test_one_change_per_idempotency_key_with_the_same_answer(shop, clock):
    first = move(shop, "1001", "Calle Mayor 5, 28013 Madrid", key="card-7")
    clock.advance(minutes=1)
    other = move(shop, "1001", "Plaza de España 1, 28008 Madrid", key="card-8")
    again = move(shop, "1001", "Calle Mayor 5, 28013 Madrid", key="card-7")
    assert (first.status_code, other.status_code, again.status_code) == (200, 200, 200)
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert state(shop, "1001")["direccion"] == "Plaza de España 1, 28008 Madrid"  # card-7 was not applied again


def test_a_key_reused_for_another_change_is_refused(shop):
    assert move(shop, "1001", "Calle Mayor 5, 28013 Madrid", key="card-7").status_code == 200
    for response in (move(shop, "1001", "Calle Mayor 6, 28013 Madrid", key="card-7"),
                     move(shop, "1004", "Calle Mayor 5, 28013 Madrid", customer=TWO, key="card-7")):
        assert response.status_code == 422 and response.json()["error"]["code"] == "idempotency_key_reused"
    assert state(shop, "1004", TWO)["direccion"] == "Calle Larios 7, 29005 Málaga"


def test_a_refused_change_stores_no_answer_for_its_key(shop):
    assert move(shop, "1001", "Calle Mayor 5, 28013 Madrid", customer=TWO, key="card-3").status_code == 403
    assert move(shop, "1001", "Calle Mayor 5, 28013 Madrid", key="card-3").status_code == 200


@pytest.mark.parametrize("body", [b"not json", b"[]", b'{"direccion": 5}', b'{"direccion": "corta"}',
                                  b'{"direccion": "Calle Mayor 5, Madrid", "pedido": "1002"}', b"",
                                  b'{"direccion": "Calle Mayor 5\\u0000, Madrid"}'])
def test_a_bad_body_says_what_to_send(shop, body):
    response = shop.post(f"{SHOP}/1001/address", content=body, headers={**ONE, "Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    assert "direccion" in response.json()["error"]["message"] or "dirección" in response.json()["error"]["message"]
    assert state(shop, "1001")["direccion"] == "Calle de Alcalá 120, 2º B, 28009 Madrid"


def test_concurrent_requests_with_one_key_change_the_order_once(runtime, clock):
    create_tenant(runtime.store, "demo", "Demo")
    app = create_app(load_settings({"COBERTURA_DATA_DIR": str(runtime.settings.data_dir)}), runtime=runtime)
    answers, barrier = [], threading.Barrier(12)

    def click(url):
        with httpx.Client(base_url=url, timeout=30) as client:
            barrier.wait()
            answers.append(client.post(f"{SHOP}/1001/address", json={"direccion": "Calle Mayor 5, 28013 Madrid"},
                                       headers={**ONE, "Idempotency-Key": "card-50"}))

    with in_thread(app) as url:
        threads = [threading.Thread(target=click, args=(url,)) for _ in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        history = httpx.get(f"{url}{SHOP}/1001/state", headers=ONE).json()
    assert [a.status_code for a in answers] == [200] * 12
    assert len({json.dumps(a.json(), sort_keys=True) for a in answers}) == 1
    assert sum("idempotent-replayed" not in a.headers for a in answers) == 1  # applied by exactly one request
    assert history["direccion"] == "Calle Mayor 5, 28013 Madrid"


# == the key ====================================================================================================
def test_with_a_shop_key_the_address_routes_want_it(runtime):
    create_tenant(runtime.store, "demo", "Demo")
    with client_for(runtime, COBERTURA_DEMO_SHOP_KEY=KEY) as shop:
        for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}):
            for response in (shop.get(f"{SHOP}/1001/state", headers={**ONE, **auth}),
                             move(shop, "1001", "Calle Mayor 5, 28013 Madrid", **auth)):
                assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
                assert response.headers["www-authenticate"] == "Bearer"
                assert "COBERTURA_DEMO_SHOP_KEY" in response.json()["error"]["message"]
                assert KEY not in response.text
        good = {"Authorization": f"Bearer {KEY}"}
        assert shop.get(f"{SHOP}/1001/state", headers={**ONE, **good}).status_code == 200
        assert move(shop, "1001", "Calle Mayor 5, 28013 Madrid", **good).status_code == 200
        assert shop.get(f"{SHOP}/1001").status_code == 200  # the public status needs no key (no personal data)


# == the demo actions, run by the HTTP executor =================================================================
def demo_operations(**changes) -> dict:
    specs = json.loads((SAMPLE_DIR / "actions.json").read_text(encoding="utf-8"))
    return {spec["name"]: definitions.operation_of(definitions.validate({**spec, **changes.get(spec["name"], {})}))
            for spec in specs}


@contextmanager
def served_shop(runtime, **environ):
    """The app on a loopback port and an HTTP executor whose {public_url} is it (``environ`` for both)."""
    create_tenant(runtime.store, "demo", "Demo")
    environ = {"COBERTURA_DATA_DIR": str(runtime.settings.data_dir), **environ}
    with in_thread(create_app(load_settings(environ), runtime=runtime)) as url:
        executor = HttpExecutor(load_settings({**environ, "COBERTURA_PUBLIC_URL": url}), environ=environ)
        try:
            yield executor
        finally:
            executor.close()


def test_the_demo_actions_work_against_the_served_shop(runtime):
    ops = demo_operations()
    status, change = ops["order_status"], ops["change_delivery_address"]
    address = {"direccion": "Calle Mayor 5, 28013 Madrid"}
    with served_shop(runtime) as executor:
        read = executor.execute(None, status, {"order_id": "1001"}, None, "read-1")
        assert read.ok and read.body["estado"] == "en preparación" and read.body["transportista"] == "SEUR"
        missing = executor.execute(None, status, {"order_id": "9999"}, None, "read-2")
        assert missing.status == "http_404" and "No hay ningún pedido" in missing.message
        before = executor.current_state(None, change, {"order_id": "1001", **address}, "demo-customer-1")
        assert before["estado"] == "en preparación"
        assert params.state_problems(change.config["state_schema"], before) == []
        shipped = executor.current_state(None, change, {"order_id": "1002"}, "demo-customer-1")
        assert params.state_problems(change.config["state_schema"], shipped)  # enviado: the card would be refused
        done = [executor.execute(None, change, {"order_id": "1001", **address}, "demo-customer-1", "card-9")
                for _ in range(2)]
        assert done[0] == done[1] and done[0].ok and done[0].body["direccion"] == address["direccion"]
        after = executor.current_state(None, change, {"order_id": "1001"}, "demo-customer-1")
        assert (after["direccion"], after["actualizado"]) == (address["direccion"], "2026-12-01T10:00:00+00:00")
        foreign = executor.execute(None, change, {"order_id": "1004", **address}, "demo-customer-1", "card-10")
        assert foreign.status == "http_403" and "no es de este cliente" in foreign.message
        late = executor.execute(None, change, {"order_id": "1002", **address}, "demo-customer-1", "card-11")
        assert late.status == "http_409" and "ya ha salido del almacén" in late.message


def test_with_a_shop_key_the_demo_write_sends_it_from_its_auth_env(runtime):
    keyed = {"auth_header": "Authorization", "auth_env": "COBERTURA_DEMO_SHOP_KEY"}
    plain = demo_operations()["change_delivery_address"]
    change = demo_operations(change_delivery_address=keyed)["change_delivery_address"]
    args = ({"order_id": "1001", "direccion": "Calle Mayor 5, 28013 Madrid"}, "demo-customer-1")
    with served_shop(runtime, COBERTURA_DEMO_SHOP_KEY=KEY) as executor:
        with pytest.raises(ActionFault, match="HTTP 401"):  # an action that sends no key
            executor.current_state(None, plain, *args)
        state_now = executor.current_state(None, change, *args)
        done = executor.execute(None, change, *args, "card-1")
        assert done.ok and done.body["direccion_anterior"] == state_now["direccion"]
        executor.environ = {}  # read at each call: without the variable the action says what to set
        unset = executor.execute(None, change, *args, "card-2")
        assert unset.status == "config_error" and "set COBERTURA_DEMO_SHOP_KEY" in unset.message
        assert KEY not in repr([state_now, done, unset])
