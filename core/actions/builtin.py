"""The built-in operations and the customer profiles they change (this module's table ``customer_profiles``).

``update_contact_email``: an identified customer's contact e-mail, kept by Cobertura. Its state is the e-mail on
file: a card proposed while it was ``a@x`` is refused at the click if it has changed since. Cancel and reschedule a
booking arrive with the booking package and register the same way.
"""
from __future__ import annotations

from core.actions.model import Execution, Operation, OpKind, OpSource
from core.base.store import Store
from core.tenancy.context import TenantContext

UPDATE_EMAIL = "update_contact_email"

_TEXT = {
    "en": {"title": "Update my contact e-mail", "new_email": "new e-mail", "email": "contact e-mail"},
    "es": {"title": "Cambiar mi e-mail de contacto", "new_email": "nuevo e-mail", "email": "e-mail de contacto"},
    "pt": {"title": "Alterar o meu e-mail de contacto", "new_email": "novo e-mail", "email": "e-mail de contacto"},
}
EXAMPLES = (
    "Quiero cambiar mi e-mail de contacto", "Cambia mi correo electrónico a nombre@ejemplo.com",
    "Actualiza mi email a otra dirección", "Mi nuevo correo es nombre@ejemplo.com, cámbialo",
    "Quero alterar o meu e-mail de contacto", "Muda o meu email para nome@exemplo.pt",
    "Atualize o meu endereço de e-mail", "Change my e-mail address to name@example.com",
    "Update my contact email", "Please use my new email address name@example.com",
)


def text(lang: str) -> dict[str, str]:
    return _TEXT.get(lang, _TEXT["en"])


def update_email_operation(lang: str = "en") -> Operation:
    words = text(lang)
    return Operation(
        UPDATE_EMAIL, words["title"],
        "Change the identified customer's contact e-mail kept by this business. Proposes a confirmation card: nothing "
        "changes until the customer approves it. Only for a customer who asks for it and gives the new address.",
        {"type": "object", "properties": {"new_email": {
            "type": "string", "format": "email", "title": words["new_email"],
            "description": "the new contact e-mail address"}},
         "required": ["new_email"], "additionalProperties": False},
        OpKind.WRITE, OpSource.BUILTIN, EXAMPLES, identified_only=True)


def builtin_operations(lang: str = "en") -> list[Operation]:
    return [update_email_operation(lang)]


def profile(ctx: TenantContext, store: Store, customer_id: str) -> dict | None:
    rows = store.query("SELECT customer_id, email, name, updated_at FROM customer_profiles WHERE tenant_id = ? "
                       "AND customer_id = ?", [ctx.tenant_id, customer_id])
    return rows[0] if rows else None


def save_profile(ctx: TenantContext, store: Store, customer_id: str, email: str = "", name: str = "") -> None:
    """Create or replace a customer's profile (the demo, and operators importing their customers)."""
    with store.write() as db:
        db.execute("INSERT INTO customer_profiles (tenant_id, customer_id, email, name, updated_at) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, customer_id) DO UPDATE SET email = excluded.email, "
                   "name = excluded.name, updated_at = excluded.updated_at",
                   [ctx.tenant_id, customer_id, email, name, store.clock.stamp()])


class BuiltinExecutor:
    """Runs the built-in operations on this store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def current_state(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None) -> dict | None:
        found = profile(ctx, self.store, customer_id or "") if customer_id else None
        return {"email": found["email"] if found else ""}

    def execute(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None,
                idempotency_key: str) -> Execution:
        if op.name != UPDATE_EMAIL or not customer_id:
            return Execution(False, "error", None, f"The built-in operation {op.name!r} needs an identified customer.")
        with self.store.write() as db:
            rows = db.execute("SELECT email FROM customer_profiles WHERE tenant_id = ? AND customer_id = ?",
                              [ctx.tenant_id, customer_id]).fetchall()
            before = rows[0][0] if rows else ""
            db.execute("INSERT INTO customer_profiles (tenant_id, customer_id, email, name, updated_at) "
                       "VALUES (?, ?, ?, '', ?) ON CONFLICT (tenant_id, customer_id) DO UPDATE SET "
                       "email = excluded.email, updated_at = excluded.updated_at",
                       [ctx.tenant_id, customer_id, params["new_email"], self.store.clock.stamp()])
        return Execution(True, "ok", {"email": params["new_email"], "previous": before},
                         "The contact e-mail was changed.")


def precondition(ctx: TenantContext, store: Store, op: Operation, params: dict,
                 state: dict | None) -> tuple[str, str, list[tuple[str, str]]] | None:
    """Why a built-in card cannot even be proposed: (for the model, kind, the state's facts), or None."""
    if op.name == UPDATE_EMAIL and state and state.get("email", "").lower() == str(params.get("new_email", "")).lower():
        return (f"{params['new_email']} is already this customer's contact e-mail: nothing to change.", "same",
                [("email", state["email"])])
    return None
