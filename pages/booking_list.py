"""The Booking page's bookings: the appointments written (code, when in the business's zone, who, how they booked,
status), and staff cancelling one (``rt.booking.cancel``: the slot is free at once, the customer is told through the
outbox)."""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.booking.schedule import Schedule
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.booking_timeline import moment
from pages.display import code, md

FLASH = "booking_list_flash"
#: the filter's choices: label -> (from now on?, status)
FILTERS = {"Upcoming": (True, "confirmed"), "Cancelled": (False, "cancelled"), "All": (False, None)}
COLUMNS = ["Code", "When", "Name", "E-mail", "Phone", "Channel", "Status"]
WIDTHS = {"Code": st.column_config.TextColumn(width=80), "When": st.column_config.TextColumn(width=190),
          "Status": st.column_config.TextColumn(width=90), "Channel": st.column_config.TextColumn(width=80)}


def when(row: dict, schedule: Schedule) -> str:
    """"Wed 2026-12-02 10:00–10:30" in the business's zone."""
    start, end = moment(row["start_utc"]).astimezone(schedule.zone), moment(row["end_utc"]).astimezone(schedule.zone)
    return f"{start:%a %Y-%m-%d %H:%M}–{end:%H:%M}"


def frame(rows: list[dict], schedule: Schedule) -> pd.DataFrame:
    return pd.DataFrame([{"Code": row.get("code", ""), "When": when(row, schedule), "Name": row.get("name", ""),
                          "E-mail": row.get("email", ""), "Phone": row.get("phone", ""),
                          "Channel": row.get("channel", ""), "Status": row.get("status", "")} for row in rows],
                        columns=COLUMNS)


def chosen_rows(rt: Runtime, ctx: TenantContext, choice: str) -> list[dict]:
    upcoming, status = FILTERS[choice]
    now: datetime = rt.store.clock.now()
    if upcoming:
        return rt.booking.bookings(ctx, start=now, end=now + timedelta(days=3650), status=status)
    rows = rt.booking.bookings(ctx, status=status)
    return sorted(rows, key=lambda row: row["start_utc"], reverse=True)


def cancel_form(rt: Runtime, ctx: TenantContext, rows: list[dict], schedule: Schedule) -> None:
    """Pick an upcoming confirmed booking and cancel it."""
    now = rt.store.clock.now()
    open_ones = [row for row in rows if row.get("status") == "confirmed" and moment(row["end_utc"]) > now]
    if not open_ones:
        return
    names = {row["id"]: f"{row['code']} · {when(row, schedule)} · {row.get('name') or 'no name'}" for row in open_ones}
    cols = st.columns([3, 1], vertical_alignment="bottom")
    picked = cols[0].selectbox("Booking to cancel", list(names), format_func=names.get, key="booking_cancel_pick")
    if not cols[1].button("Cancel the booking", key="booking_cancel", icon=":material/event_busy:", width="stretch",
                          help="The slot is free again at once; the customer gets a cancellation e-mail (Outbox)."):
        return
    try:
        done = rt.booking.cancel(ctx, picked, actor=ctx.actor)
    except UserError as exc:
        st.session_state.setdefault(FLASH, []).append(("error", f"Not cancelled: {md(exc)}"))
    else:
        st.session_state.setdefault(FLASH, []).append(
            ("success", f"Cancelled booking `{code(done.get('code', ''))}` ({md(names[picked])}): the time is free "
                        "again."))
    st.rerun()


def show(rt: Runtime, ctx: TenantContext, schedule: Schedule) -> None:
    for kind, message in st.session_state.pop(FLASH, []):
        getattr(st, kind)(message)
    choice = st.segmented_control("Show", list(FILTERS), key="booking_list_filter", default="Upcoming",
                                  required=True) or "Upcoming"
    rows = chosen_rows(rt, ctx, choice)
    if not rows:
        st.caption({"Upcoming": "No upcoming bookings.", "Cancelled": "No cancelled bookings."}.get(
            choice, "No bookings yet."))
        return
    st.caption(f"{len(rows)} booking(s) · times in {schedule.timezone}")
    st.dataframe(frame(rows, schedule), hide_index=True, width="stretch", column_config=WIDTHS)
    cancel_form(rt, ctx, rows, schedule)
