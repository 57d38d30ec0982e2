"""The Booking page's schedule editor: the tenant's one schedule (B1) as a form.

Weekly hours are typed as people write them ("09:00-14:00, 16:00-19:00"; empty = closed); the form becomes the
schedule's JSON form (:meth:`core.booking.schedule.Schedule.to_dict`) and goes to ``rt.booking.save_schedule``,
which refuses a bad field by name and saves nothing. The refusal is shown with the form's own label for the field
("Tuesday hours, range 2"), the typed values stay in the form to be fixed.
"""
from __future__ import annotations

import hashlib
import json
import re
import zoneinfo

import streamlit as st

from core.booking.model import ScheduleError
from core.booking.schedule import DEMO_SCHEDULE, LIMITS, WEEKDAYS, Schedule
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.display import md

DAY_NAMES = dict(zip(WEEKDAYS, ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")))
#: the number fields: name -> (label, help)
NUMBERS = {
    "slot_minutes": ("Slot length (minutes)", "How long one appointment lasts."),
    "buffer_minutes": ("Buffer (minutes)", "Kept free before and after every booking, hold and block (cleaning, "
                                           "travel, overrun). Slots start every slot length + buffer."),
    "min_notice_minutes": ("Minimum notice (minutes)", "No slot starting sooner than this from now is offered "
                                                       "(120 = two hours)."),
    "horizon_days": ("Booking horizon (days)", "How far ahead customers can book."),
}
#: the schedule's field names (as ScheduleError names them) -> the form's labels
LABELS = {"timezone": "Time zone", "country": "Country for phone numbers", "closed_dates": "Closed dates",
          "weekly": "Weekly hours", **{name: label for name, (label, _) in NUMBERS.items()},
          **{f"weekly.{day}": f"{name} hours" for day, name in DAY_NAMES.items()}}
_RANGE = re.compile(r"^\s*([^\s\-–—]+)\s*[-–—]\s*([^\s\-–—]+)\s*$")
_FIELD = re.compile(r"^(weekly\.(?:mon|tue|wed|thu|fri|sat|sun))\[(\d+)\]")
FLASH = "booking_schedule_flash"


# -- the form's text <-> the schedule's JSON form ---------------------------------------------------------------
def ranges_text(pairs: list[list[str]]) -> str:
    """[["09:00", "14:00"], ["16:00", "19:00"]] -> "09:00-14:00, 16:00-19:00" ("" = closed)."""
    return ", ".join(f"{start}-{end}" for start, end in pairs)


def parse_ranges(day: str, text: str) -> list[list[str]]:
    """"09:00-14:00, 16:00-19:00" -> [["09:00", "14:00"], ["16:00", "19:00"]]; empty text = closed that day.
    The times themselves are checked by the schedule; a piece that is no range at all is refused here, by name."""
    out = []
    for n, piece in enumerate(p for p in re.split(r"[,;\n]", text or "") if p.strip()):
        found = _RANGE.match(piece)
        if not found:
            raise ScheduleError(f"weekly.{day}[{n}]: {piece.strip()!r} is not a range; write it like 09:00-14:00, "
                                "several separated by commas (empty = closed).")
        out.append([found.group(1), found.group(2)])
    return out


def parse_dates(text: str) -> list[str]:
    """One date per line (or separated by commas or spaces), YYYY-MM-DD; the schedule checks each."""
    return [piece for piece in re.split(r"[\s,;]+", text or "") if piece]


def form_data(values: dict) -> dict:
    """The form's values (``timezone``, ``country``, ``closed_dates`` text, each weekday's text, the numbers) as the
    schedule's JSON form."""
    return {"timezone": values["timezone"], "country": str(values.get("country") or "").strip().upper(),
            "closed_dates": parse_dates(values.get("closed_dates", "")),
            "weekly": {day: parse_ranges(day, values.get(day, "")) for day in WEEKDAYS},
            **{name: values[name] for name in NUMBERS}}


def field_label(message: str) -> str:
    """The form's label of the field a ScheduleError names ("weekly.tue[1]: …" -> "Tuesday hours, range 2")."""
    head = message.split(":", 1)[0].strip()
    ranged = _FIELD.match(head)
    if ranged:
        return f"{LABELS[ranged.group(1)]}, range {int(ranged.group(2)) + 1}"
    return LABELS.get(head, "Schedule")


def refusal(message: str) -> str:
    """What the page says when the schedule is refused: the field by its label, then the schedule's own words
    (without the field's JSON name, which the label replaces)."""
    label = field_label(message)
    said = message.split(":", 1)[1].strip() if label != "Schedule" and ":" in message else message
    return f"**Not saved — {label}:** {md(said)} Nothing was changed; fix the field and save again."


def starting_point(schedule: Schedule | None) -> dict:
    """The form's first values: the saved schedule, or (booking off) the demo workshop's hours without its
    holidays, to be adapted."""
    if schedule is not None:
        return schedule.to_dict()
    return {**DEMO_SCHEDULE.to_dict(), "closed_dates": []}


# -- the editor -------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False)
def zones() -> list[str]:
    return sorted(zoneinfo.available_timezones())


def _version(data: dict) -> str:
    """A short digest of the saved schedule: the form's widgets are new ones after every save (they show what was
    stored, normalised), and keep what was typed while a save is refused."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]


def _weekly_inputs(base: dict, key) -> dict:
    st.markdown("**Weekly hours** · ranges like `09:00-14:00, 16:00-19:00` (the gap is the break); empty = closed")
    values = {}
    for row in (WEEKDAYS[:4], WEEKDAYS[4:]):
        cols = st.columns(4)
        for col, day in zip(cols, row):
            values[day] = col.text_input(f"{DAY_NAMES[day]} hours", value=ranges_text(base["weekly"].get(day, [])),
                                         key=key(day), placeholder="closed")
    return values


def _form(base: dict, key) -> dict | None:
    """The form; its values when it was submitted, else None."""
    with st.form(key("form"), enter_to_submit=False):
        top = st.columns([2, 1, 1], vertical_alignment="bottom")
        names = zones()
        values = {"timezone": top[0].selectbox(
            "Time zone", names, index=names.index(base["timezone"]) if base["timezone"] in names else None,
            key=key("timezone"), help="The business's IANA zone: the hours below are its wall-clock times, every "
                                      "UTC offset (summer time included) comes from the time-zone database.")}
        values["country"] = top[1].text_input(LABELS["country"], value=base["country"], max_chars=2, key=key("country"),
                                              help="Two letters (ES, PT, US): phone numbers written without "
                                                   "+prefix are read as numbers of this country.")
        values.update(_weekly_inputs(base, key))
        cols = st.columns(4)
        for col, (name, (label, help_text)) in zip(cols, NUMBERS.items()):
            low, high = LIMITS[name]
            values[name] = col.number_input(label, min_value=low, max_value=high, step=5 if "minutes" in name else 1,
                                            value=int(base[name]), key=key(name), help=help_text)
        values["closed_dates"] = st.text_area(
            LABELS["closed_dates"], value="\n".join(base["closed_dates"]), key=key("closed"), height=100,
            placeholder="2026-12-25\n2027-01-01", help="Holidays and other days without appointments, one per line "
                                                       "as YYYY-MM-DD.")
        submitted = st.form_submit_button("Save schedule", type="primary", icon=":material/save:")
    return values if submitted else None


def editor(rt: Runtime, ctx: TenantContext, schedule: Schedule | None) -> None:
    """The schedule form; a save goes through ``rt.booking.save_schedule`` (which names a refused field)."""
    for kind, message in st.session_state.pop(FLASH, []):
        getattr(st, kind)(message)
    base = starting_point(schedule)
    version = _version(base)

    def key(name: str) -> str:
        return f"booking_schedule_{ctx.tenant_slug}_{version}_{name}"

    if schedule is None:
        st.info("**Booking is off:** this tenant has no schedule, so the agent offers no times and the widget no "
                "booking window. The form starts from a workshop's hours (Europe/Madrid); adapt them and save to turn "
                "booking on.", icon=":material/event_busy:")
    values = _form(base, key)
    if values is None:
        return
    try:
        saved = rt.booking.save_schedule(ctx, form_data(values), actor=ctx.actor)
    except ScheduleError as exc:
        st.error(refusal(str(exc)), icon=":material/error:")
        return
    days = sum(1 for ranges in saved.weekly.values() if ranges)
    st.session_state.setdefault(FLASH, []).append(
        ("success", f"Schedule saved: {days} day(s) a week open, {saved.slot_minutes}-minute slots, times in "
                    f"{saved.timezone}. Customers are offered the new times from now on."))
    st.rerun()
