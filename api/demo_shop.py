"""The demo shop (#18): the small order API of the demo tenant's bike shop, which its two HTTP actions call
(``order_status`` reads an order, ``change_delivery_address`` changes where an unshipped order goes).

It is served at ``/demo-shop/v1/...`` only while a tenant ``demo`` exists, and keeps its own state in
``demo-shop.sqlite`` in the data dir (created and seeded with orders 1001-1004 on first use; the seeded dates count
from that moment). Like a real service it checks who asks (``X-Customer-Id``), refuses to redirect an order that has
left the warehouse, honours ``Idempotency-Key`` (one change per key, the same answer every time) and, when
``COBERTURA_DEMO_SHOP_KEY`` is set, wants ``Authorization: Bearer <key>`` on the routes that show or change an
address. The public status of an order (what a visitor may read with its number) shows no personal data.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import sqlite_utils
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.errors import ApiError
from core.base.clock import iso
from core.demo import DEMO_SLUG
from core.tenancy.tenants import list_tenants

router = APIRouter(prefix="/demo-shop/v1", include_in_schema=False)  # the shop's API, not Cobertura's
FILE_NAME = "demo-shop.sqlite"
PENDING, PROCESSING, SHIPPED, DELIVERED = "pendiente", "en preparación", "enviado", "entregado"
CHANGEABLE = (PENDING, PROCESSING)  # the address of an order can change until it leaves the warehouse
DELIVERY_DAYS, TRANSIT_DAYS = 4, 2  # expected delivery: order date + 4 days, or shipping date + 2 days
ORDER_NUMBER = re.compile(r"^[0-9]{1,12}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shop_orders (
    pedido TEXT PRIMARY KEY, cliente TEXT NOT NULL, estado TEXT NOT NULL, transportista TEXT NOT NULL,
    seguimiento TEXT, direccion TEXT NOT NULL, articulos TEXT NOT NULL, creado TEXT NOT NULL, enviado TEXT,
    entregado TEXT, actualizado TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shop_idempotency (
    clave TEXT PRIMARY KEY, huella TEXT NOT NULL, respuesta TEXT NOT NULL, creado TEXT NOT NULL);
"""

#: the seeded orders; ``hace`` is how long before the shop's first use each was placed
SEED = (
    {"pedido": "1001", "cliente": "demo-customer-1", "estado": PROCESSING, "transportista": "SEUR",
     "direccion": "Calle de Alcalá 120, 2º B, 28009 Madrid", "hace": timedelta(days=1),
     "articulos": ["Casco Lumen Urban (talla M)", "Luz trasera recargable USB"]},
    {"pedido": "1002", "cliente": "demo-customer-1", "estado": SHIPPED, "transportista": "Correos Express",
     "seguimiento": "CE4410092637ES", "direccion": "Avinguda Diagonal 455, 5º 1ª, 08036 Barcelona",
     "hace": timedelta(days=3), "enviado_tras": timedelta(days=1),
     "articulos": ["Bicicleta Lumen Ciudad 7V (talla L)"]},
    {"pedido": "1003", "cliente": "demo-customer-2", "estado": DELIVERED, "transportista": "MRW",
     "seguimiento": "MRW0265512877", "direccion": "Rúa do Vilar 12, 15705 Santiago de Compostela",
     "hace": timedelta(days=12), "enviado_tras": timedelta(days=1), "entregado_tras": timedelta(days=3),
     "articulos": ["Cámara 700x35C (2 uds.)", "Kit de parches"]},
    {"pedido": "1004", "cliente": "demo-customer-2", "estado": PENDING, "transportista": "SEUR",
     "direccion": "Calle Larios 7, 29005 Málaga", "hace": timedelta(hours=2),
     "articulos": ["Candado en U Lumen Secure"]},
)


def seed_rows(now: datetime) -> list[dict]:
    """The seeded orders as rows, their dates counted back from ``now``."""
    rows = []
    for order in SEED:
        placed = now - order["hace"]
        shipped = placed + order["enviado_tras"] if "enviado_tras" in order else None
        delivered = shipped + order["entregado_tras"] if shipped and "entregado_tras" in order else None
        rows.append({"pedido": order["pedido"], "cliente": order["cliente"], "estado": order["estado"],
                     "transportista": order["transportista"], "seguimiento": order.get("seguimiento"),
                     "direccion": order["direccion"], "articulos": json.dumps(order["articulos"], ensure_ascii=False),
                     "creado": iso(placed), "enviado": iso(shipped) if shipped else None,
                     "entregado": iso(delivered) if delivered else None,
                     "actualizado": iso(delivered or shipped or placed)})
    return rows


@contextmanager
def _transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    db.execute("BEGIN IMMEDIATE")  # read-check-write: two clicks with one key must not both change the order
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _prepare(db: sqlite_utils.Database, now: datetime) -> None:
    """Create the tables and the seeded orders the first time the shop is used."""
    if db["shop_orders"].exists() and db["shop_idempotency"].exists():
        return
    db.execute("PRAGMA journal_mode=WAL")
    with _transaction(db):
        for statement in filter(str.strip, _SCHEMA.split(";")):
            db.execute(statement)
        if not db.execute("SELECT count(*) FROM shop_orders").fetchone()[0]:
            db["shop_orders"].insert_all(seed_rows(now))


@contextmanager
def _opened(request: Request, need_key: bool) -> Iterator[sqlite_utils.Database]:
    """The shop's database, after the checks every route makes: a demo tenant exists (404), the key (401)."""
    state = request.app.state
    if not any(t["slug"] == DEMO_SLUG for t in list_tenants(state.rt.store)):
        raise ApiError(404, "no_demo_shop", f"This server has no '{DEMO_SLUG}' tenant, so there is no demo shop; "
                       "create it with `python -m core init`.")
    key = state.settings.demo_shop_key
    if need_key and key and not hmac.compare_digest(request.headers.get("authorization", "").strip().encode(),
                                                    f"Bearer {key}".encode()):
        raise ApiError(401, "unauthorized", "The demo shop wants the header Authorization: Bearer <the value of "
                       "COBERTURA_DEMO_SHOP_KEY> on this route.", headers={"WWW-Authenticate": "Bearer"})
    conn = sqlite3.connect(str(state.settings.data_dir / FILE_NAME), timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        db = sqlite_utils.Database(conn)
        _prepare(db, state.rt.store.clock.now())
        yield db
    finally:
        conn.close()


def _order(db: sqlite_utils.Database, number: str) -> dict:
    rows = list(db.query("SELECT * FROM shop_orders WHERE pedido = ?", [number])) if ORDER_NUMBER.match(number) else []
    if not rows:
        raise ApiError(404, "order_not_found", f"No hay ningún pedido con el número {number[:20]!r}; comprueba el "
                       "número (está en el correo de confirmación, p. ej. 1001).")
    return rows[0]


def _customer(request: Request, order: dict) -> str:
    """The customer asking (``X-Customer-Id``), who must be the one who placed ``order`` (403 otherwise)."""
    customer = request.headers.get("x-customer-id", "").strip()
    if not customer:
        raise ApiError(403, "customer_required", "Falta la cabecera X-Customer-Id: solo el cliente que hizo el "
                       "pedido puede ver o cambiar su dirección.")
    if not hmac.compare_digest(customer.encode(), order["cliente"].encode()):
        raise ApiError(403, "not_your_order", f"El pedido {order['pedido']} no es de este cliente: solo quien lo "
                       "hizo puede ver o cambiar su dirección de entrega.")
    return customer


def _day(stamp: str) -> str:
    return datetime.fromisoformat(stamp).date().isoformat()


def public_view(order: dict) -> dict:
    """What anyone with the order number may read: the status, items, carrier and dates; the destination only
    as postcode and town (the street and the customer stay private)."""
    out = {"pedido": order["pedido"], "estado": order["estado"], "articulos": json.loads(order["articulos"]),
           "transportista": order["transportista"], "fecha_pedido": _day(order["creado"])}
    if order["seguimiento"]:
        out["seguimiento"] = order["seguimiento"]
    if order["enviado"]:
        out["fecha_envio"] = _day(order["enviado"])
    if order["entregado"]:
        out["entregado_el"] = _day(order["entregado"])
    else:
        start, days = (order["enviado"], TRANSIT_DAYS) if order["enviado"] else (order["creado"], DELIVERY_DAYS)
        out["entrega_prevista"] = (datetime.fromisoformat(start) + timedelta(days=days)).date().isoformat()
    out["destino"] = order["direccion"].rsplit(",", 1)[-1].strip()
    return out


def state_view(order: dict) -> dict:
    return {"pedido": order["pedido"], "estado": order["estado"], "direccion": order["direccion"],
            "actualizado": order["actualizado"]}


@router.get("/orders/{number}")
def order_status(number: str, request: Request) -> dict:
    """The status of an order, by its number."""
    with _opened(request, need_key=False) as db:
        return public_view(_order(db, number))


@router.get("/orders/{number}/state")
def order_state(number: str, request: Request) -> dict:
    """Status and delivery address of the customer's own order (what the address change re-checks)."""
    with _opened(request, need_key=True) as db:
        order = _order(db, number)
        _customer(request, order)
        return state_view(order)


def _new_address(raw: bytes) -> str:
    example = 'Envía JSON como {"direccion": "Calle Mayor 5, 28013 Madrid"} (solo ese campo).'
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        raise ApiError(422, "invalid_request", f"El cuerpo no es JSON. {example}") from None
    if not isinstance(data, dict) or set(data) != {"direccion"} or not isinstance(data["direccion"], str):
        raise ApiError(422, "invalid_request", f"Falta la nueva dirección o sobran campos. {example}")
    address = " ".join(data["direccion"].split())
    if not 8 <= len(address) <= 200 or _CONTROL.search(address):
        raise ApiError(422, "invalid_request", "La dirección debe tener entre 8 y 200 caracteres, sin caracteres de "
                       "control: calle y número, código postal y localidad.")
    return address


def _change(request: Request, number: str, raw: bytes, key: str) -> tuple[dict, bool]:
    """Change the address once per Idempotency-Key; (the answer, whether it is a stored one)."""
    with _opened(request, need_key=True) as db:
        address = _new_address(raw)
        customer = request.headers.get("x-customer-id", "").strip()
        fingerprint = hashlib.sha256(json.dumps([number, customer, address]).encode()).hexdigest()
        with _transaction(db):
            stored = list(db.query("SELECT huella, respuesta FROM shop_idempotency WHERE clave = ?", [key]))
            if stored and stored[0]["huella"] != fingerprint:
                raise ApiError(422, "idempotency_key_reused", "Esta Idempotency-Key ya se usó para otra petición; "
                               "usa una clave nueva para cada cambio distinto.")
            if stored:
                return json.loads(stored[0]["respuesta"]), True
            order = _order(db, number)
            _customer(request, order)
            if order["estado"] not in CHANGEABLE:
                raise ApiError(409, "order_shipped", f"El pedido {number} ya ha salido del almacén (estado: "
                               f"{order['estado']}), así que su dirección de entrega ya no se puede cambiar.")
            now = request.app.state.rt.store.clock.stamp()
            db.execute("UPDATE shop_orders SET direccion = ?, actualizado = ? WHERE pedido = ?", [address, now, number])
            answer = {**state_view({**order, "direccion": address, "actualizado": now}),
                      "direccion_anterior": order["direccion"],
                      "mensaje": f"Nueva dirección de entrega del pedido {number}: {address}."}
            if key:
                db.execute("INSERT INTO shop_idempotency (clave, huella, respuesta, creado) VALUES (?, ?, ?, ?)",
                           [key, fingerprint, json.dumps(answer, ensure_ascii=False), now])
        return answer, False


@router.post("/orders/{number}/address")
async def change_address(number: str, request: Request) -> JSONResponse:
    """Change the delivery address of the customer's own order while it has not shipped."""
    key = request.headers.get("idempotency-key", "").strip()
    if len(key) > 200:
        raise ApiError(422, "invalid_request", "Idempotency-Key es demasiado larga (máximo 200 caracteres).")
    answer, replayed = await run_in_threadpool(_change, request, number, await request.body(), key)
    return JSONResponse(answer, headers={"Idempotent-Replayed": "true"} if replayed else None)
