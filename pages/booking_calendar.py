"""The Booking page's calendar connection: the embedded calendar (our own tables, the default) or a CalDAV calendar
(Nextcloud, iCloud, Fastmail, Radicale) that staff keep editing in their own app.

The password is never typed here nor stored: the form takes the *name* of an environment variable of the server
that holds it (e.g. ``COBERTURA_CALDAV_PASSWORD``). *Test connection* reads the calendar with the form's values
(``core.booking.caldav_calendar.check``) and says what it found or what failed; *Save* stores them through
``rt.booking.connect_caldav``, which refuses a bad field by name. While a CalDAV calendar is connected and cannot be
read, no times are offered.
"""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.display import code, md, stamp

FLASH = "booking_calendar_flash"
#: the connection's field names (as the refusals name them) -> the form's labels
LABELS = {"url": "Calendar URL", "username": "User", "password_env": "Password variable"}


def field_label(message: str) -> str:
    head = message.split(":", 1)[0].strip()
    return LABELS.get(head, "Calendar")


def try_connection(rt: Runtime, ctx: TenantContext, url: str, username: str, password_env: str) -> tuple[str, str]:
    """(st.<kind>, message) for the form's values: what the calendar answered, or what to fix."""
    from core.booking.caldav_calendar import check
    from core.booking.calendars import check_connection

    try:
        url, username, password_env = check_connection(url, username, password_env)
    except UserError as exc:
        return "error", f"**{field_label(str(exc))}:** {md(exc)}"
    password = ""
    if password_env:
        password = rt.booking.environ.get(password_env, "")
        if not password:
            return "error", (f"**Password variable:** `{code(password_env)}` is not set in the environment of the "
                             "admin app's server; set it (and the same for `python -m api`) and restart, or leave the "
                             "field empty for a calendar without a password.")
    try:
        zone = rt.booking.schedule(ctx)
        said = check(url, username, password, timezone=zone.timezone if zone else "UTC", password_env=password_env,
                     clock=rt.store.clock)
    except UserError as exc:
        return "error", f"**Connection failed:** {md(exc)}"
    return "success", f"**Connection works:** {md(said)}"


def current(rt: Runtime, ctx: TenantContext) -> dict | None:
    found = rt.booking.connection(ctx)
    if not found:
        st.info("**Embedded calendar** (the default): bookings, holds and blocks live in this app's database only. "
                "Connect a CalDAV calendar below to read staff's own appointments as busy time and write every "
                "booking there too.", icon=":material/calendar_month:")
        return None
    st.success(f"**CalDAV calendar connected:** `{code(found['url'])}` as `{code(found.get('username') or '—')}`, "
               f"password from `{code(found.get('password_env') or '—')}` · saved {stamp(found.get('updated_at'))} by "
               f"{md(found.get('updated_by') or '?')}", icon=":material/event_available:")
    return found


def form(rt: Runtime, ctx: TenantContext, found: dict | None) -> None:
    found = found or {}
    with st.form(f"booking_caldav_{ctx.tenant_slug}", enter_to_submit=False):
        url = st.text_input(LABELS["url"], value=found.get("url", ""), key="booking_caldav_url",
                            placeholder="https://cloud.example.com/remote.php/dav/calendars/ana/citas/",
                            help="The address of the calendar collection (not the server's root).")
        cols = st.columns(2)
        username = cols[0].text_input(LABELS["username"], value=found.get("username", ""), key="booking_caldav_user")
        password_env = cols[1].text_input(
            LABELS["password_env"], value=found.get("password_env", ""), key="booking_caldav_env",
            placeholder="COBERTURA_CALDAV_PASSWORD",
            help="The NAME of the server's environment variable that holds the password (or app password); the "
                 "password itself is never typed here nor stored.")
        buttons = st.container(horizontal=True)
        tested = buttons.form_submit_button("Test connection", icon=":material/network_check:")
        saved = buttons.form_submit_button("Save the connection", type="primary", icon=":material/save:")
    if tested:
        kind, message = try_connection(rt, ctx, url, username, password_env)
        getattr(st, kind)(message)
    if saved:
        try:
            rt.booking.connect_caldav(ctx, url, username, password_env)
        except UserError as exc:
            st.error(f"**Not saved — {field_label(str(exc))}:** {md(exc)}", icon=":material/error:")
            return
        st.session_state.setdefault(FLASH, []).append(
            ("success", "Saved: availability now reads this calendar, and every booking is written to it. Use *Test "
                        "connection* to check it answers."))
        st.rerun()


def show(rt: Runtime, ctx: TenantContext) -> None:
    for kind, message in st.session_state.pop(FLASH, []):
        getattr(st, kind)(message)
    found = current(rt, ctx)
    form(rt, ctx, found)
    if found and st.button("Disconnect (back to the embedded calendar)", key="booking_caldav_disconnect",
                           icon=":material/link_off:",
                           help="Bookings already written to the CalDAV calendar stay there."):
        rt.booking.disconnect_calendar(ctx)
        st.session_state.setdefault(FLASH, []).append(
            ("success", "Disconnected: the embedded calendar is used again."))
        st.rerun()
