"""Creating, confirming, moving and cancelling bookings (B3): from whatever a model sends to one row written
after the re-check, or a refusal that tells the model what happened, the facts and what to do next.

The order of a create: normalise the raw input (``core.booking.normalize``: JSON inside strings, wrappers,
"undefined"/"sin teléfono" as missing) → the idempotency key (a retry returns the first booking) → missing and
invalid fields by name → a past date (today's date in the business's zone) → a time the schedule has → the phone
channel's offered list → inside one write transaction, the re-check and the write (taken: up to five free times of
that day) → after the commit, the confirmation into the outbox.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.base.clock import iso
from core.booking import bookings, holds, recheck, slots
from core.booking.model import (
    BookingError,
    CalendarUnavailable,
    CreateResult,
    HoldNotFound,
    Slot,
    SlotTaken,
    booking_view,
    zone_label,
)
from core.booking.schedule import Schedule
from core.tenancy.context import TenantContext

if TYPE_CHECKING:
    from core.booking.service import Booking

UNAVAILABLE = ("The business's calendar cannot be read right now ({why}). Nothing was booked and no time can be "
               "offered: tell the customer to try again later, or hand the conversation to a person.")


def _times(found: tuple[Slot, ...] | list[Slot], schedule: Schedule, lang: str) -> str:
    return "; ".join(slot.to_dict(schedule.zone, lang)["label"] for slot in found)


def _local(start: datetime, schedule: Schedule) -> str:
    """A moment as the business's clock shows it: "2026-12-03 10:30 (Europe/Madrid)"."""
    return f"{start.astimezone(schedule.zone):%Y-%m-%d %H:%M} ({schedule.timezone})"


class Creator:
    def __init__(self, service: Booking) -> None:
        self.service = service
        self.store = service.store

    # -- reading a time -------------------------------------------------------------------------------------
    def moment(self, schedule: Schedule, start: str | datetime) -> datetime:
        """An aware UTC instant from an ISO time with offset, or a local one read in the business's zone."""
        from core.booking.normalize import validate

        if isinstance(start, datetime):
            if start.tzinfo is None:
                raise BookingError("start: a time without its zone; give it with its offset or as local time text.")
            return start
        checked = validate({"start": start}, schedule, self.service.now())
        if checked.start is None:
            raise BookingError("; ".join(checked.problems) or f"start: {start!r} is not a time (YYYY-MM-DDTHH:MM).")
        return checked.start

    def bookable(self, schedule: Schedule, slot: Slot, now: datetime) -> None:
        """A time in the past, too soon or past the horizon raises BookingError saying which."""
        today = schedule.today(now)
        if slot.start < now:
            raise BookingError(self.past(schedule, slot, now))
        if slot.start < now + timedelta(minutes=schedule.min_notice_minutes):
            raise BookingError(f"{slot.to_dict(schedule.zone, 'en')['label']} is too soon: bookings need "
                               f"{schedule.min_notice_minutes} minutes' notice. Offer a later time.")
        if slot.start.astimezone(schedule.zone).date() > today + timedelta(days=schedule.horizon_days):
            raise BookingError(f"Bookings are taken up to {schedule.horizon_days} days ahead (until "
                               f"{(today + timedelta(days=schedule.horizon_days)).isoformat()}); ask for an earlier "
                               "date.")

    def past(self, schedule: Schedule, slot: Slot, now: datetime) -> str:
        from core.booking.normalize import past_message

        return past_message(slot.start.astimezone(schedule.zone).date(), schedule, now)

    # -- create ---------------------------------------------------------------------------------------------
    def create(self, ctx: TenantContext, raw: Any, *, channel: str, conversation_id: str, customer_id: str | None,
               idempotency_key: str | None, offered_only: bool, lang: str) -> CreateResult:
        from core.booking.normalize import normalize, validate

        schedule = self.service.schedule(ctx)
        if schedule is None:
            from core.booking.service import NO_SCHEDULE

            return CreateResult("no_schedule", NO_SCHEDULE)
        fields, now = normalize(raw), self.service.now()
        key = idempotency_key or fields.get("idempotency_key") or None
        first = bookings.by_key(ctx, self.store, key)
        checked = validate(fields, schedule, now)
        if first is not None:
            return self.retried(first, checked, schedule, lang)
        if checked.missing or checked.problems:
            status = "missing" if checked.missing and not checked.problems else "invalid"
            named = ", ".join(checked.missing)
            past = [self.past(schedule, Slot(checked.start, checked.start + timedelta(minutes=1)), now)] \
                if checked.start is not None and checked.start < now else []
            said = " ".join([*checked.problems, *past])
            message = (f"Not booked. {'Missing: ' + named + '. ' if named else ''}{said} Ask the customer for "
                       "exactly these and call create_booking again.").replace("  ", " ")
            return CreateResult(status, message, missing=tuple(checked.missing), problems=tuple(checked.problems))
        values = {**checked.values, "channel": channel, "conversation_id": conversation_id,
                  "customer_id": customer_id, "idempotency_key": key, "lang": lang}
        if not values.get("phone") and channel == "phone" and (customer_id or "").startswith("phone:"):
            from core.booking.normalize import phone_of  # a caller's number, when the gateway gave one

            values["phone"] = phone_of(customer_id[len("phone:"):], schedule.country) or ""
        return self.write(ctx, schedule, checked.start, values, now, lang, offered_only=offered_only)

    def write(self, ctx: TenantContext, schedule: Schedule, start: datetime, values: dict, now: datetime, lang: str,
              offered_only: bool = False, hold_id: str = "") -> CreateResult:
        slot = slots.is_slot(schedule, start)
        day = start.astimezone(schedule.zone).date()
        calendar = self.service.calendar(ctx)
        try:
            if start < now:
                return CreateResult("past", self.past(schedule, Slot(start, start + timedelta(minutes=1)), now))
            if slot is None:
                return self.refusal("not_a_slot", ctx, schedule, day, start, now, lang,
                                    f"{_local(start, schedule)} is not a bookable time of this business's schedule.")
            try:
                self.bookable(schedule, slot, now)
            except BookingError as exc:
                return self.refusal("not_a_slot", ctx, schedule, day, start, now, lang, str(exc))
            if offered_only:
                offered = self.service.offered(ctx, values.get("conversation_id", ""))
                if slot not in offered:
                    return CreateResult("not_offered", "Not booked: book only a slot from the list you offered in this "
                                        f"conversation: {_times(offered, schedule, 'en')}. Read that list to the "
                                        "customer again or call check_availability.")
            return self.commit(ctx, schedule, calendar, slot, values, now, lang, hold_id)
        except CalendarUnavailable as exc:
            return CreateResult("unavailable", UNAVAILABLE.format(why=exc))

    def commit(self, ctx: TenantContext, schedule: Schedule, calendar, slot: Slot, values: dict, now: datetime,
               lang: str, hold_id: str = "") -> CreateResult:
        try:
            with self.store.write():
                first = bookings.by_key(ctx, self.store, values.get("idempotency_key"))
                if first is not None:  # a retry that raced the first create
                    return self.booked(first, schedule, lang, repeated=True)
                recheck.read_busy_then(ctx, self.store, calendar, schedule, slot, now, but_hold=hold_id)
                row = bookings.insert(ctx, self.store, slot, values, now)
                etag = calendar.create(row["id"], slot, self.summary(row), self.description(row))
                if etag or calendar.name != "embedded":
                    row = bookings.set_event(ctx, self.store, row, row["id"], etag)
                if hold_id:
                    holds.end(ctx, self.store, hold_id, "confirmed", now, row["id"])
        except SlotTaken as exc:
            exc = recheck.with_alternatives(exc, ctx, self.store, calendar, schedule, now, but_hold=hold_id)
            later = (f"Free times that day: {_times(exc.alternatives, schedule, 'en')}. Offer these to the customer "
                     "now." if exc.alternatives else "No other time is free that day: call check_availability with "
                     "mode 'first' for the next free times.")
            return CreateResult("taken", f"Not booked: that time is no longer free. {later}",
                                alternatives=exc.alternatives)
        self.confirmation(ctx, row, schedule, lang, "confirmation")
        return self.booked(row, schedule, lang)

    def refusal(self, status: str, ctx: TenantContext, schedule: Schedule, day, start: datetime, now: datetime,
                lang: str, why: str) -> CreateResult:
        calendar = self.service.calendar(ctx)
        found = recheck.busy(ctx, self.store, calendar, slots.day_bounds(schedule, day), now)
        options = tuple(slots.alternatives(schedule, day, found, now, around=start))
        if not options:
            return CreateResult(status, f"Not booked: {why} There is no free time that day (closed, fully booked or "
                                "outside the booking window): call check_availability with mode 'first' from that "
                                "date for the next free times.")
        return CreateResult(status, f"Not booked: {why} Free times that day: {_times(options, schedule, 'en')}. "
                            "Offer these, or call check_availability for another day.", alternatives=options)

    def booked(self, row: dict, schedule: Schedule, lang: str, repeated: bool = False) -> CreateResult:
        view = booking_view(row, schedule.zone, "en")
        said = (f"Booked: {view['label']}, {zone_label(schedule.timezone, 'en')}, code {row['code']}. Read back "
                "the date, the time and the time zone to the customer, and the code.")
        if repeated:
            said = "This create was already done (same idempotency key): nothing new was written. " + said
        return CreateResult("booked", said, booking=row, repeated=repeated)

    def retried(self, first: dict, checked, schedule: Schedule, lang: str) -> CreateResult:
        """The first result of a key, when the retry asks for the same booking; a key reused for another time or
        another person is refused (it would confirm someone else's booking)."""
        same_time = checked.start is None or iso(checked.start) == first["start_utc"]
        same_person = not checked.values.get("email") or checked.values["email"].lower() == first["email"].lower()
        if same_time and same_person:
            return self.booked(first, schedule, lang, repeated=True)
        return CreateResult("invalid", "Not booked: this idempotency key was already used for another booking "
                            f"({booking_view(first, schedule.zone, 'en')['label']}, {first['email'] or 'no e-mail'}). "
                            "Use a new key for a new booking.", problems=("idempotency_key: already used for another "
                                                                          "booking",))

    @staticmethod
    def summary(row: dict) -> str:
        return f"{row['name'] or 'Booking'} ({row['code']})"

    @staticmethod
    def description(row: dict) -> str:
        parts = [f"Code: {row['code']}", f"E-mail: {row['email']}" if row.get("email") else "",
                 f"Phone: {row['phone']}" if row.get("phone") else "", row.get("notes") or "",
                 f"Booked through Cobertura ({row.get('channel') or 'cli'})"]
        return "\n".join(part for part in parts if part)

    def confirmation(self, ctx: TenantContext, row: dict, schedule: Schedule, lang: str, kind: str,
                     previous: dict | None = None) -> None:
        """The e-mail to the customer, queued after the commit; delivery is best-effort and retried later."""
        if not row.get("email"):
            return
        self.service.outbox.booking_message(ctx, kind, row, schedule, lang, previous=previous)

    # -- holds, moves and cancellations ---------------------------------------------------------------------
    def confirm_hold(self, ctx: TenantContext, hold_id: str, details: Any, channel: str, customer_id: str | None,
                     lang: str) -> CreateResult:
        from core.booking.normalize import normalize, validate

        schedule, now = self.service.require_schedule(ctx), self.service.now()
        found = holds.get(ctx, self.store, hold_id, now)
        if found["status"] not in ("held", "expired"):  # an expired hold is re-checked like a new create
            raise HoldNotFound(holds.NOT_FOUND)
        fields = {**normalize(details), "start": found["start_utc"]}
        checked = validate(fields, schedule, now)
        if checked.missing or checked.problems:
            return CreateResult("missing" if not checked.problems else "invalid",
                                " ".join([*(f"{name} is missing." for name in checked.missing), *checked.problems]),
                                missing=tuple(checked.missing), problems=tuple(checked.problems))
        values = {**checked.values, "channel": channel, "conversation_id": found["conversation_id"],
                  "customer_id": customer_id, "idempotency_key": f"hold:{found['id']}", "lang": lang}
        return self.write(ctx, schedule, checked.start, values, now, lang,
                          hold_id=found["id"] if found["status"] == "held" else "")

    def cancel(self, ctx: TenantContext, id_or_code: str, actor: str) -> dict:
        schedule, now = self.service.require_schedule(ctx), self.service.now()
        calendar = self.service.calendar(ctx)
        with self.store.write():
            row = bookings.get(ctx, self.store, id_or_code)
            if row["status"] != "confirmed":
                raise BookingError(f"Booking {row['code']} is already {row['status']}: nothing to cancel.")
            note = ""
            if row.get("calendar_uid"):
                try:
                    calendar.delete(row["calendar_uid"], row.get("calendar_etag", ""))
                except SlotTaken:  # staff changed the event in their calendar app: theirs stays, ours is cancelled
                    note = ("The booking is cancelled here, but its event in the connected calendar was changed by "
                            "someone since it was booked, so it was left there: remove it in the calendar app.")
            bookings.cancel(ctx, self.store, row["id"], now)
        done = {**bookings.get(ctx, self.store, row["id"]), **({"note": note} if note else {})}
        self.confirmation(ctx, done, schedule, done.get("lang") or "es", "cancellation")
        return done

    def reschedule(self, ctx: TenantContext, id_or_code: str, new_start: str | datetime, actor: str,
                   lang: str) -> CreateResult:
        schedule, now = self.service.require_schedule(ctx), self.service.now()
        row = bookings.get(ctx, self.store, id_or_code)
        if row["status"] != "confirmed":
            return CreateResult("invalid", f"Booking {row['code']} is {row['status']}: it cannot be moved.")
        start = self.moment(schedule, new_start)
        slot = slots.is_slot(schedule, start)
        day = start.astimezone(schedule.zone).date()
        if slot is None or start < now:
            return self.refusal("not_a_slot" if slot is None else "past", ctx, schedule, day, start, now, lang,
                                f"{_local(start, schedule)} is not a bookable future time of this schedule.")
        calendar = self.service.calendar(ctx)
        try:
            self.bookable(schedule, slot, now)
            with self.store.write():
                current = bookings.get(ctx, self.store, row["id"])
                recheck.read_busy_then(ctx, self.store, calendar, schedule, slot, now, but_booking=current)
                etag = current.get("calendar_etag", "")
                if current.get("calendar_uid"):
                    etag = calendar.update(current["calendar_uid"], slot, self.summary(current),
                                           self.description(current), etag)
                bookings.move(ctx, self.store, row["id"], slot, etag, now)
        except SlotTaken as exc:
            exc = recheck.with_alternatives(exc, ctx, self.store, calendar, schedule, now, but_booking=row)
            return CreateResult("taken", "Not moved: that time is no longer free. Free times that day: "
                                f"{_times(exc.alternatives, schedule, 'en')}.", alternatives=exc.alternatives)
        except CalendarUnavailable as exc:
            return CreateResult("unavailable", UNAVAILABLE.format(why=exc))
        except BookingError as exc:
            return self.refusal("not_a_slot", ctx, schedule, day, start, now, lang, str(exc))
        moved = bookings.get(ctx, self.store, row["id"])
        self.confirmation(ctx, moved, schedule, moved.get("lang") or lang, "reschedule", previous=row)
        return self.booked(moved, schedule, lang)
