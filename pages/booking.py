"""Booking (B1-B5): the tenant's one schedule, the coming week's bookings, holds and blocks, the outbox, the calendar.

- **Timeline**: the next 7 days in the business's time zone (plotly), the next free times customers are offered,
  and staff blocks (add one by hand; it counts at once).
- **Bookings**: every appointment (code, when, who, channel, status); cancel one.
- **Schedule**: the editor of the one schedule (time zone, weekly hours with breaks, slot, buffer, notice, horizon,
  phone country, closed dates); a refused field is named and nothing is saved.
- **Outbox**: the confirmation e-mails, failures in red with Retry.
- **Calendar**: the embedded calendar or a CalDAV connection, with Test connection.

Admins and editors only. Everything goes through ``rt.booking`` (:class:`core.booking.service.Booking`).
"""
from __future__ import annotations

from datetime import datetime, time, timedelta

import streamlit as st

from core.base.clock import iso
from core.booking.model import BookingError, CalendarUnavailable, day_label
from core.booking.schedule import Schedule
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import (
    booking_blocks,
    booking_calendar,
    booking_list,
    booking_outbox,
    booking_schedule,
    booking_timeline,
    common,
)
from pages.display import md

TABS = ["Timeline", "Bookings", "Schedule", "Outbox", "Calendar"]
TAB_PARAM = "tab"  # ?tab=Schedule opens that tab
NEXT_FREE = 5


def next_free(rt: Runtime, ctx: TenantContext, schedule: Schedule) -> None:
    """The first free times, exactly as the agent and the widget would offer them now."""
    try:
        found = rt.booking.availability(ctx, mode="first", lang="en", limit=NEXT_FREE)
    except CalendarUnavailable as exc:
        st.warning(f"**No times are offered now:** {md(exc)}", icon=":material/cloud_off:")
        return
    except BookingError as exc:
        st.warning(md(exc))
        return
    if not found.slots:
        st.warning(f"**No free time in the next {schedule.horizon_days} days:** customers are offered nothing. Check "
                   "the weekly hours, the closed dates and the blocks.", icon=":material/event_busy:")
        return
    days: dict = {}
    for slot in found.slots:
        days.setdefault(slot.local(schedule.zone).date(), []).append(f"{slot.local(schedule.zone):%H:%M}")
    times = " · ".join(f"{day_label(day, 'en')}: {', '.join(hours)}" for day, hours in days.items())
    st.markdown(f"**Next free times** (what a customer asking now is offered): {times}")


def calendar_busy(rt: Runtime, ctx: TenantContext, start: datetime, end: datetime) -> list[dict] | None:
    """The busy time of a connected CalDAV calendar as timeline rows (None: the embedded calendar). A calendar that
    cannot be read is said here; no times are offered meanwhile."""
    calendar = rt.booking.calendar(ctx)
    if calendar.name == "embedded":
        return None
    try:
        busy = calendar.busy(start, end)
    except CalendarUnavailable as exc:
        st.warning(f"**The connected calendar cannot be read:** {md(exc)}", icon=":material/cloud_off:")
        return []
    return [{"kind": "calendar", "start_utc": iso(span.start), "end_utc": iso(span.end), "status": "busy",
             "label": "busy in the connected calendar"} for span in busy]


def timeline(rt: Runtime, ctx: TenantContext, schedule: Schedule) -> None:
    now = rt.store.clock.now()
    start = datetime.combine(schedule.today(now), time(), tzinfo=schedule.zone)
    end = datetime.combine(schedule.today(now) + timedelta(days=booking_timeline.DAYS), time(), tzinfo=schedule.zone)
    busy = calendar_busy(rt, ctx, start, end)
    rows = booking_timeline.drawn_rows(rt.booking.timeline(ctx, start, end) + (busy or []))
    counts = {kind: sum(1 for row in rows if row["kind"] == kind) for kind in booking_timeline.KINDS}
    also = f", {counts['calendar']} busy time(s) in the connected calendar" if busy is not None else ""
    st.caption(f"Next {booking_timeline.DAYS} days: {counts['booking']} booking(s), {counts['hold']} live hold(s), "
               f"{counts['block']} block(s){also}. Times in {schedule.timezone}; hover a bar for its details.")
    st.plotly_chart(booking_timeline.figure(rows, schedule, now, calendar=busy is not None),
                    config={"displayModeBar": False}, key="booking_timeline_chart")
    next_free(rt, ctx, schedule)
    st.divider()
    booking_blocks.add_form(rt, ctx, schedule)
    booking_blocks.listing(rt, ctx, schedule)


def failed_banner(rt: Runtime, ctx: TenantContext) -> None:
    failed = rt.booking.outbox.failures(ctx)
    if failed:
        st.error(f"**{len(failed)} confirmation e-mail(s) could not be sent.** See the Outbox tab to retry.",
                 icon=":material/mail_off:")


def main() -> None:
    rt = common.open_app()
    ctx = common.page_context(rt)
    st.title("Booking")
    if not (ctx.can("editor") or ctx.can("admin")):
        st.error(f"Only an admin or an editor manages booking; you are signed in as {ctx.role}.")
        st.stop()
    schedule = rt.booking.schedule(ctx)
    st.caption("Appointments the agent offers and books: by phone only a time it offered, on the website the visitor "
               "picks in the booking window. Every booking re-checks bookings, holds and blocks inside one write, so "
               "a time is never booked twice." + (f" Times in **{schedule.timezone}**." if schedule else ""))
    failed_banner(rt, ctx)
    # the open tab is in the URL (?tab=Schedule) and only its content runs
    tabs = dict(zip(TABS, st.tabs(TABS, key=TAB_PARAM, bind="query-params")))
    for name in ("Timeline", "Bookings"):
        if tabs[name].open and schedule is None:
            with tabs[name]:
                st.info("**Booking is off:** this tenant has no schedule yet. Set the hours on the **Schedule** tab.",
                        icon=":material/event_busy:")
    if tabs["Timeline"].open and schedule is not None:
        with tabs["Timeline"]:
            timeline(rt, ctx, schedule)
    if tabs["Bookings"].open and schedule is not None:
        with tabs["Bookings"]:
            booking_list.show(rt, ctx, schedule)
    if tabs["Schedule"].open:
        with tabs["Schedule"]:
            booking_schedule.editor(rt, ctx, schedule)
    if tabs["Outbox"].open:
        with tabs["Outbox"]:
            booking_outbox.show(rt, ctx)
    if tabs["Calendar"].open:
        with tabs["Calendar"]:
            booking_calendar.show(rt, ctx)


main()
