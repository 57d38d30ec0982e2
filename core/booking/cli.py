"""The booking commands: ``python -m core availability|book|bookings|booking-schedule|blocks|outbox|booking-calendar``.

The operator of the data directory is the tenant's admin. Times a person types are local times of the business
(``2026-12-03T10:00`` or ``2026-12-03 10:00``) unless they carry an offset. ``book`` takes the raw input exactly as a
model would send it (JSON inside strings, wrappers, "undefined", "sin teléfono") and prints what the model would
read; it exits 0 when it booked, 1 when it did not (the JSON says why), 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from core.actions.cli import closing
from core.booking.model import BookingError, booking_view, zone_label
from core.booking.slots import MODES, day_bounds

BLOCKS_USAGE = ("python -m core blocks SLUG [--json] | blocks add SLUG START END [--reason TEXT] | "
                "blocks rm SLUG ID")
OUTBOX_USAGE = "python -m core outbox SLUG [--status S] [--json] | outbox deliver SLUG | outbox retry SLUG ID"
CALENDAR_USAGE = ("python -m core booking-calendar SLUG | booking-calendar connect SLUG URL [--user U] "
                  "[--password-env VAR] | booking-calendar test SLUG | booking-calendar off SLUG")


def _dump(data) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _words(words: list[str], actions: dict[str, int], usage: str) -> tuple[str, list[str]]:
    """(action, its words): ``blocks demo`` lists; ``blocks add demo A B`` adds."""
    if words and words[0] in actions and len(words) > 1:
        action, rest = words[0], words[1:]
    else:
        action, rest = "list", words
    if len(rest) != actions.get(action, 1):
        raise BookingError(f"Usage: {usage}")
    return action, rest


def _open(args, runtime, context):
    rt = runtime()
    return rt, context(rt, args.slug if hasattr(args, "slug") else args.words[1])


def cmd_availability(args, runtime, context) -> int:
    rt, ctx = _open(args, runtime, context)
    found = rt.booking.availability(ctx, args.mode, args.date, args.lang).to_dict(args.lang)
    if args.json:
        _dump(found)
        return 0
    if found.get("note"):
        print(f"note: {found['note']}")
    print(f"{found['mode']} from {found['start_day']} — times in {found['zone_label']}; today is {found['today']}")
    for day in found["days"]:
        print(f"  {day['label']}: {', '.join(slot['time'] for slot in day['slots'])}")
    if not found["days"]:
        print("  no free times (closed, fully booked or past the booking horizon)")
    return 0


def _raw_input(args) -> object:
    text = args.json if isinstance(args.json, str) else args.raw
    if args.input:
        text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text(encoding="utf-8")
    if text is None:
        raise BookingError("Give the booking as JSON, e.g. python -m core book demo --json "
                           "'{\"name\": \"Ana\", \"email\": \"ana@example.com\", \"start\": \"2026-12-03T10:00\"}', "
                           "or --input FILE (- for stdin).")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # whatever a model sends: a string is normalised like any other shape


def cmd_book(args, runtime, context) -> int:
    rt, ctx = _open(args, runtime, context)
    result = rt.booking.create(ctx, _raw_input(args), channel="cli", idempotency_key=args.key, lang=args.lang)
    schedule = rt.booking.schedule(ctx)
    if args.json or schedule is None:
        _dump(result.to_dict(schedule.zone, args.lang) if schedule else {"status": result.status,
                                                                          "message": result.message})
    else:
        print(result.message)
    return 0 if result.ok else 1


def cmd_bookings(args, runtime, context) -> int:
    rt, ctx = _open(args, runtime, context)
    schedule = rt.booking.require_schedule(ctx)
    start = day_bounds(schedule, schedule.today(rt.booking.now()) if not args.start else
                       datetime.fromisoformat(args.start).date()).start
    rows = rt.booking.bookings(ctx, start, start + timedelta(days=args.days), args.status)
    views = [booking_view(row, schedule.zone, args.lang) for row in rows]
    if args.json:
        _dump(views)
        return 0
    print(f"times in {zone_label(schedule.timezone, args.lang)}")
    for view in views:
        print(f"  {view['code']}  {view['date']} {view['time']}  {view['status']:<9}  {view['name']}  "
              f"{view['email']}  {view['phone']}  ({view['channel']})")
    if not views:
        print("  no bookings in that span")
    return 0


def cmd_schedule(args, runtime, context) -> int:
    rt, ctx = _open(args, runtime, context)
    if args.off:
        rt.booking.remove_schedule(ctx)
        print("Booking is off for this tenant (its bookings stay).")
        return 0
    if args.set:
        text = sys.stdin.read() if args.set == "-" else Path(args.set).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BookingError(f"{args.set} is not JSON ({exc.msg} at line {exc.lineno}); nothing was "
                               "changed.") from None
        rt.booking.save_schedule(ctx, data)
    schedule = rt.booking.schedule(ctx)
    if schedule is None:
        print("No booking schedule: booking is off. Set one with --set FILE.json (see README, Booking).")
        return 0
    _dump(schedule.to_dict())
    return 0


def _local(rt, ctx, text: str) -> datetime:
    return rt.booking.creator.moment(rt.booking.require_schedule(ctx), text)


def cmd_blocks(args, runtime, context) -> int:
    action, rest = _words(args.words, {"list": 1, "add": 3, "rm": 2}, BLOCKS_USAGE)
    rt = runtime()
    ctx = context(rt, rest[0])
    if action == "add":
        row = rt.booking.add_block(ctx, _local(rt, ctx, rest[1]), _local(rt, ctx, rest[2]), args.reason or "")
        _dump(row) if args.json else print(f"Blocked {_span(rt, ctx, row)} as {row['id']}: no customer is offered "
                                           "that time.")
        return 0
    if action == "rm":
        rt.booking.remove_block(ctx, rest[1])
        print(f"Removed block {rest[1]}.")
        return 0
    schedule = rt.booking.require_schedule(ctx)
    start = day_bounds(schedule, schedule.today(rt.booking.now())).start
    rows = rt.booking.blocks(ctx, start, start + timedelta(days=400))
    if args.json:
        _dump(rows)
    for row in [] if args.json else rows:
        print(f"  {row['id']}  {_span(rt, ctx, row)}  {row['reason']}")
    return 0


def _span(rt, ctx, row: dict) -> str:
    """A stored span in the business's zone: "2026-12-03 10:00-12:00 (Europe/Madrid)"."""
    zone = rt.booking.require_schedule(ctx).zone
    start, end = (datetime.fromisoformat(row[k]).astimezone(zone) for k in ("start_utc", "end_utc"))
    until = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M}"
    return f"{start:%Y-%m-%d %H:%M}-{until} ({zone.key})"


def cmd_outbox(args, runtime, context) -> int:
    action, rest = _words(args.words, {"list": 1, "deliver": 1, "retry": 2}, OUTBOX_USAGE)
    rt = runtime()
    ctx = context(rt, rest[0])
    if action == "deliver":
        _dump(rt.booking.outbox.deliver_due(ctx))
        return 0
    if action == "retry":
        _dump(rt.booking.outbox.retry(ctx, rest[1]))
        return 0
    rows = rt.booking.outbox.list(ctx, args.status)
    if args.json:
        _dump(rows)
        return 0
    for row in rows:
        print(f"  {row['id']}  {row['status']:<8} {row['kind']:<12} {row['recipient']}  attempts {row['attempts']}  "
              f"{row['last_error']}")
    if not rows:
        print("  the outbox is empty")
    return 0


def cmd_calendar(args, runtime, context) -> int:
    action, rest = _words(args.words, {"list": 1, "connect": 2, "test": 1, "off": 1}, CALENDAR_USAGE)
    rt = runtime()
    ctx = context(rt, rest[0])
    if action == "connect":
        rt.booking.connect_caldav(ctx, rest[1], args.user or "", args.password_env or "")
    elif action == "off":
        rt.booking.disconnect_calendar(ctx)
    elif action == "test":
        print(rt.booking.test_calendar(ctx))
        return 0
    found = rt.booking.connection(ctx)
    _dump(found or {"kind": "embedded", "note": "bookings live in Cobertura's own calendar"})
    return 0


def _explained(p, usage: str, text: str) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = text
    p.epilog = "examples:\n  " + usage.replace(" | ", "\n  python -m core ")


def register(add) -> None:
    """Add the booking commands through ``add(name, func, help)`` of the CLI."""
    p = add("availability", closing(cmd_availability), "free times: availability SLUG --mode day|week|first "
            "[--date D]")
    p.add_argument("slug")
    p.add_argument("--mode", choices=MODES, default="first", help="a day, a week from the date, or the first free "
                   "times (default first)")
    p.add_argument("--date", help="YYYY-MM-DD or words (mañana, el martes, tomorrow); default today")
    p.add_argument("--lang", default="es", choices=("es", "pt", "en"), help="labels' language (default es)")
    p = add("book", closing(cmd_book), "create a booking from raw model input: book SLUG --json '<raw>'")
    given = p.add_argument_group("input", conflict_handler="resolve")  # here --json takes the raw input, too
    given.add_argument("--json", nargs="?", const=True, default=False, metavar="RAW", help="the booking as JSON, in "
                   "any shape a model sends (JSON inside strings, wrappers, \"undefined\"); the result is printed "
                   "as JSON")
    p.add_argument("slug")
    p.add_argument("raw", nargs="?", help="the raw input as a positional argument instead (the result as text)")
    p.add_argument("--input", metavar="FILE", help="read the raw input from FILE (- for stdin)")
    p.add_argument("--key", help="an idempotency key: a retried create with it returns the first booking")
    p.add_argument("--lang", default="es", choices=("es", "pt", "en"))
    p = add("bookings", closing(cmd_bookings), "list bookings: bookings SLUG [--from D] [--days N]")
    p.add_argument("slug")
    p.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first day (default today)")
    p.add_argument("--days", type=int, default=60, help="how many days (default 60)")
    p.add_argument("--status", choices=("confirmed", "cancelled"))
    p.add_argument("--lang", default="es", choices=("es", "pt", "en"))
    p = add("booking-schedule", closing(cmd_schedule), "show or set the booking schedule (JSON; --off: booking off)")
    p.add_argument("slug")
    p.add_argument("--set", metavar="FILE", help="the schedule as JSON (- for stdin); refused whole, naming the field")
    p.add_argument("--off", action="store_true", help="remove the schedule: booking off (bookings stay)")
    p = add("blocks", closing(cmd_blocks), "staff blocks: blocks SLUG | blocks add SLUG START END | blocks rm SLUG ID")
    _explained(p, BLOCKS_USAGE, "START and END are local times of the business (2026-12-03T10:00).")
    p.add_argument("words", nargs="+", metavar="ARG")
    p.add_argument("--reason", help="add: why (shown on the Booking page)")
    p = add("outbox", closing(cmd_outbox), "confirmation e-mails: outbox SLUG | outbox deliver SLUG | outbox retry "
            "SLUG ID")
    _explained(p, OUTBOX_USAGE, "deliver sends what is due now (SMTP: COBERTURA_SMTP_*); retry makes a failed "
               "message due again.")
    p.add_argument("words", nargs="+", metavar="ARG")
    p.add_argument("--status", choices=("pending", "sent", "failed"))
    p = add("booking-calendar", closing(cmd_calendar), "the calendar bookings go to: embedded (default) or CalDAV")
    _explained(p, CALENDAR_USAGE, "connect stores the CalDAV collection URL, the user and the NAME of the environment "
               "variable holding the password (never the password); test reads it now.")
    p.add_argument("words", nargs="+", metavar="ARG")
    p.add_argument("--user", help="connect: the CalDAV user name")
    p.add_argument("--password-env", help="connect: the environment variable that holds the password")
