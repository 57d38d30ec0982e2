"""The Booking page's staff blocks: time taken out of the schedule by hand (a training, an absence, a repair).

A block counts at once: availability and every create re-read the blocks inside the write, so a slot a block
covers (buffer included) is offered to nobody from the moment it is saved. The form's date and times are the
business's wall-clock times; a time the clocks skip that day (spring forward) is refused, not shifted.
"""
from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.booking.schedule import Schedule
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.booking_timeline import moment
from pages.display import md

FLASH = "booking_blocks_flash"
SHOWN_DAYS = 60  # the blocks listed: from today on, this many days


def local_instant(schedule: Schedule, day: date, at: time, what: str) -> datetime:
    """The UTC instant of a local wall time; refused (naming ``what``) when the clocks skip it that day."""
    local = datetime.combine(day, at, tzinfo=schedule.zone)
    there = local.astimezone(timezone.utc)
    if there.astimezone(schedule.zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        raise UserError(f"{what}: {at:%H:%M} does not exist on {day.isoformat()} in {schedule.timezone} (the clocks "
                        "skip it); pick another time.")
    return there


def block_span(schedule: Schedule, day: date, start: time, end: time, whole_day: bool) -> tuple[datetime, datetime]:
    """The block's UTC span: the local day from ``start`` to ``end`` (or the whole local day)."""
    if whole_day:
        return (local_instant(schedule, day, time(), "From"),
                local_instant(schedule, day + timedelta(days=1), time(), "To"))
    if end <= start:
        raise UserError(f"To: {end:%H:%M} is not after {start:%H:%M}; a block ends after it starts (tick *Whole day* "
                        "for a day off).")
    return local_instant(schedule, day, start, "From"), local_instant(schedule, day, end, "To")


def add_form(rt: Runtime, ctx: TenantContext, schedule: Schedule) -> None:
    today = schedule.today(rt.store.clock.now())
    with st.form(f"booking_block_{ctx.tenant_slug}", clear_on_submit=False, enter_to_submit=False):
        st.markdown(f"**Add a block** · times in {schedule.timezone}")
        cols = st.columns([1.2, 1, 1, 0.8, 2.4], vertical_alignment="bottom")
        day = cols[0].date_input("Date", value=today, min_value=today, key="booking_block_day", format="YYYY-MM-DD")
        start = cols[1].time_input("From", value=time(10), step=timedelta(minutes=15), key="booking_block_from")
        end = cols[2].time_input("To", value=time(11), step=timedelta(minutes=15), key="booking_block_to")
        whole = cols[3].checkbox("Whole day", key="booking_block_whole")
        reason = cols[4].text_input("Reason", key="booking_block_reason", placeholder="Training, absence, repair…",
                                    max_chars=200)
        submitted = st.form_submit_button("Add the block", icon=":material/block:")
    if not submitted:
        return
    try:
        begins, ends = block_span(schedule, day, start, end, whole)
        rt.booking.add_block(ctx, begins, ends, reason=reason.strip(), actor=ctx.actor)
    except UserError as exc:
        st.error(f"**Block not added:** {md(exc)}", icon=":material/error:")
        return
    what = "the whole day" if whole else f"{start:%H:%M}–{end:%H:%M}"
    st.session_state.setdefault(FLASH, []).append(
        ("success", f"Blocked {day.isoformat()} {what} ({schedule.timezone}): no customer is offered that time."))
    st.rerun()


def frame(rows: list[dict], schedule: Schedule) -> pd.DataFrame:
    tz = schedule.zone
    out = []
    for row in rows:
        start, end = moment(row["start_utc"]).astimezone(tz), moment(row["end_utc"]).astimezone(tz)
        same = start.date() == end.date()
        out.append({"From": f"{start:%a %Y-%m-%d %H:%M}",
                    "To": f"{end:%H:%M}" if same else f"{end:%a %Y-%m-%d %H:%M}",
                    "Reason": row.get("reason") or "", "By": row.get("created_by") or ""})
    return pd.DataFrame(out, columns=["From", "To", "Reason", "By"])


def listing(rt: Runtime, ctx: TenantContext, schedule: Schedule) -> None:
    """The blocks from today on, each removable."""
    for kind, message in st.session_state.pop(FLASH, []):
        getattr(st, kind)(message)
    today = schedule.today(rt.store.clock.now())
    start = datetime.combine(today, time(), tzinfo=schedule.zone)
    rows = rt.booking.blocks(ctx, start, start + timedelta(days=SHOWN_DAYS))
    if not rows:
        st.caption(f"No blocks in the next {SHOWN_DAYS} days.")
        return
    st.dataframe(frame(rows, schedule), hide_index=True, width="stretch")
    cols = st.columns([3, 1], vertical_alignment="bottom")
    names = {row["id"]: label for row, label in zip(rows, _labels(rows, schedule))}
    chosen = cols[0].selectbox("Block to remove", list(names), format_func=names.get, key="booking_block_pick")
    if cols[1].button("Remove the block", key="booking_block_remove", icon=":material/delete:", width="stretch"):
        try:
            rt.booking.remove_block(ctx, chosen)
        except UserError as exc:
            st.session_state.setdefault(FLASH, []).append(("error", f"Not removed: {md(exc)}"))
        else:
            st.session_state.setdefault(FLASH, []).append(
                ("success", f"Removed the block {names[chosen]}: its times can be offered again."))
        st.rerun()


def _labels(rows: list[dict], schedule: Schedule) -> list[str]:
    table = frame(rows, schedule)
    return [f"{r.From} – {r.To} · {r.Reason or 'no reason'}" for r in table.itertuples()]
