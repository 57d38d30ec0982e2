"""Cancel and reschedule a booking as operations of the registry (C4, B4): write operations, so the agent can only
propose them as confirmation cards, for an identified customer, on a booking of theirs; the approval click re-reads
the booking (its status, and for a move whether the new time is still free) and runs the frozen card once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.actions.model import Execution, Operation, OpKind, OpSource
from core.base.clock import iso
from core.booking import slots
from core.booking.model import BookingError, BookingNotFound, booking_view
from core.tenancy.context import TenantContext

if TYPE_CHECKING:
    from core.booking.service import Booking

CANCEL, RESCHEDULE = "cancel_booking", "reschedule_booking"
_TEXT = {
    "es": {CANCEL: "Anular mi cita", RESCHEDULE: "Cambiar la hora de mi cita", "code": "código de la cita",
           "new_start": "nueva fecha y hora", "status": "estado", "when": "cita"},
    "pt": {CANCEL: "Cancelar a minha marcação", RESCHEDULE: "Mudar a hora da minha marcação",
           "code": "código da marcação", "new_start": "nova data e hora", "status": "estado", "when": "marcação"},
    "en": {CANCEL: "Cancel my appointment", RESCHEDULE: "Move my appointment", "code": "appointment code",
           "new_start": "new date and time", "status": "status", "when": "appointment"},
}
_EXAMPLES = {
    CANCEL: ("Quiero anular mi cita", "Cancela mi reserva ABC234", "Anula la cita, no podré ir",
             "Quero cancelar a minha marcação", "Cancele a reserva", "Cancel my appointment",
             "Please cancel booking ABC234"),
    RESCHEDULE: ("Quiero cambiar la hora de mi cita", "Mueve mi cita ABC234 al jueves a las 10:00",
                 "Cambia mi reserva a otro día", "Quero mudar a minha marcação para outro dia",
                 "Reschedule my appointment", "Move booking ABC234 to Friday at 9:00"),
}
_CODE = {"type": "string", "pattern": "^(?=[A-Za-z2-9]*[2-9])[A-Za-z2-9]{6}$", "description": "the 6-character "
         "code of the booking, letters and at least one digit (in its confirmation e-mail)"}


def text(lang: str) -> dict[str, str]:
    return _TEXT.get(lang, _TEXT["en"])


def booking_operations(lang: str = "en") -> list[Operation]:
    words = text(lang)
    code = {**_CODE, "title": words["code"]}
    confirmed = {"type": "object", "required": ["status"],
                 "properties": {"status": {"const": "confirmed", "title": words["status"]}}}
    cancel = Operation(
        CANCEL, words[CANCEL], "Cancel one of the identified customer's bookings, by its code. Proposes a confirmation "
        "card: nothing is cancelled until the customer approves it.",
        {"type": "object", "properties": {"booking_code": code}, "required": ["booking_code"],
         "additionalProperties": False}, OpKind.WRITE, OpSource.BOOKING, _EXAMPLES[CANCEL],
        config={"state_schema": confirmed})
    move_state = {**confirmed, "required": ["status", "requested_time"],
                  "properties": {**confirmed["properties"],
                                 "requested_time": {"const": "free", "title": words["new_start"]}}}
    move = Operation(
        RESCHEDULE, words[RESCHEDULE], "Move one of the identified customer's bookings to another free time of the "
        "schedule (call check_availability first and use one of its start times). Proposes a confirmation card.",
        {"type": "object", "properties": {"booking_code": code, "new_start": {
            "type": "string", "title": words["new_start"], "pattern": r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}",
            "description": "the new start, local time of the business, YYYY-MM-DDTHH:MM (a start check_availability "
            "listed)"}}, "required": ["booking_code", "new_start"], "additionalProperties": False},
        OpKind.WRITE, OpSource.BOOKING, _EXAMPLES[RESCHEDULE], config={"state_schema": move_state})
    return [cancel, move]


class BookingExecutor:
    """Reads a booking's state for a card and runs the approved card through the booking service."""

    def __init__(self, service: Booking) -> None:
        self.service = service

    def _mine(self, ctx: TenantContext, code: str, customer_id: str | None) -> dict | None:
        try:
            row = self.service.booking(ctx, code)
        except BookingNotFound:
            return None
        return row if customer_id and row.get("customer_id") == customer_id else None  # others' look missing

    def current_state(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None) -> dict | None:
        schedule = self.service.schedule(ctx)
        row = self._mine(ctx, params.get("booking_code", ""), customer_id)
        if row is None or schedule is None:
            return {"status": "not_found"}
        view = booking_view(row, schedule.zone, "en")
        state = {"status": row["status"], "booking_code": row["code"], "when": view["label"]}
        if op.name == RESCHEDULE:
            state["new_start"] = view["start"][:16]
            state["requested_time"] = self._free(ctx, schedule, row, params.get("new_start", ""))
        return state

    def _free(self, ctx: TenantContext, schedule, row: dict, new_start: str) -> str:
        try:
            _, slot = self.service.slot_at(ctx, new_start)
        except BookingError:
            return "not_a_time_of_the_schedule"
        if iso(slot.start) == row["start_utc"]:
            return "the_same_time"
        day = slot.start.astimezone(schedule.zone).date()
        found = self.service.availability(ctx, "day", day, limit=slots.MAX_SLOTS)
        return "free" if slot in found.slots else "taken"

    def execute(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None,
                idempotency_key: str) -> Execution:
        row = self._mine(ctx, params.get("booking_code", ""), customer_id)
        if row is None:
            return Execution(False, "not_found", None, "No booking of this customer has that code.")
        try:
            if op.name == CANCEL:
                done = self.service.cancel(ctx, row["id"], ctx.actor)
                return Execution(True, "ok", {"code": done["code"], "status": done["status"]},
                                 f"Booking {done['code']} was cancelled.")
            result = self.service.reschedule(ctx, row["id"], params["new_start"], ctx.actor)
        except BookingError as exc:
            return Execution(False, "error", None, str(exc))
        if not result.ok:
            return Execution(False, result.status, None, result.message)
        return Execution(True, "ok", {"code": result.booking["code"], "start_utc": result.booking["start_utc"]},
                         result.message)
