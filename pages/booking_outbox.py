"""The Booking page's outbox: the confirmation and cancellation e-mails (B5), their delivery, the failures.

A message is written to the outbox after its booking is committed and sent by SMTP when ``COBERTURA_SMTP_HOST`` is
set; a failed attempt is retried later (1, 5, 30, 120 minutes), and after five it is *failed* and shown here in red
with its error and a Retry button. Without SMTP the messages wait as *pending*, never lost.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.booking import mailer
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.display import code, md, stamp

FLASH = "booking_outbox_flash"
COLUMNS = ["Status", "Kind", "To", "Subject", "Attempts", "Last error", "Next attempt", "Created", "Sent"]
#: status -> the row's background (failures stand out; a pending message that already failed once, less so)
COLOURS = {"failed": "background-color: #fde2e1", "retrying": "background-color: #fff3d6"}
WIDTHS = {"Status": st.column_config.TextColumn(width=80), "Kind": st.column_config.TextColumn(width=100),
          "Attempts": st.column_config.NumberColumn(width=70), "Last error": st.column_config.TextColumn(width=320)}


def shown_status(row: dict) -> str:
    """failed / sent / pending, and *retrying* for a pending message whose last attempt failed."""
    status = row.get("status", "")
    if status == "pending" and row.get("attempts") and row.get("last_error"):
        return "retrying"
    return status


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"Status": shown_status(row), "Kind": row.get("kind", ""), "To": row.get("recipient", ""),
                          "Subject": row.get("subject", ""), "Attempts": int(row.get("attempts") or 0),
                          "Last error": row.get("last_error", ""),
                          "Next attempt": stamp(row.get("next_attempt_at")) if row.get("status") == "pending" else "",
                          "Created": stamp(row.get("created_at")), "Sent": stamp(row.get("sent_at"))
                          if row.get("sent_at") else ""} for row in rows], columns=COLUMNS)


def styled(table: pd.DataFrame):
    """The table with failed rows in red and retrying rows in amber."""
    return table.style.apply(lambda row: [COLOURS.get(row["Status"], "")] * len(row), axis=1)


def retry(rt: Runtime, ctx: TenantContext, row: dict) -> None:
    """Retry one message now (its attempts back to 0, then one delivery round) and say how it went."""
    try:
        after = rt.booking.outbox.retry(ctx, row["id"])
    except UserError as exc:
        st.session_state.setdefault(FLASH, []).append(("error", f"Not retried: {md(exc)}"))
    else:
        to = f"`{code(row.get('recipient'))}`"
        if after.get("status") == "sent":
            st.session_state.setdefault(FLASH, []).append(("success", f"Sent the message to {to}."))
        else:
            error = str(after.get("last_error") or "no error").rstrip(". ")
            st.session_state.setdefault(FLASH, []).append(
                ("warning", f"Retried the message to {to}: still not sent ({md(error)}). It is tried again later."))
    st.rerun()


def summary(report: dict) -> str:
    """What one delivery round did (``Outbox.deliver_due``'s counts)."""
    if not report.get("configured"):
        return str(report.get("error") or "SMTP is not configured.")
    said = (f"{report.get('sent', 0)} sent, {report.get('retrying', 0)} to be retried, {report.get('failed', 0)} "
            f"failed, {report.get('pending', 0)} pending.")
    return said + (f" Last error: {report['error']}" if report.get("error") else "")


def failures(rt: Runtime, ctx: TenantContext) -> None:
    failed = rt.booking.outbox.failures(ctx)
    if not failed:
        return
    st.error(f"**{len(failed)} message(s) could not be delivered** after every retry. Check the SMTP settings "
             "(`COBERTURA_SMTP_*`) or the address, then retry.", icon=":material/mail_off:")
    for row in failed:
        cols = st.columns([5, 1], vertical_alignment="center")
        cols[0].markdown(f"**{md(row.get('subject'))}** to `{code(row.get('recipient'))}` · "
                         f"{int(row.get('attempts') or 0)} attempt(s) · {md(row.get('last_error') or 'no error')}")
        if cols[1].button("Retry", key=f"booking_outbox_retry_{row['id']}", icon=":material/refresh:",
                          width="stretch"):
            retry(rt, ctx, row)


def show(rt: Runtime, ctx: TenantContext) -> None:
    for kind, message in st.session_state.pop(FLASH, []):
        getattr(st, kind)(message)
    if not mailer.configured(rt.settings):
        st.info(f"**No e-mail is sent yet.** {md(mailer.NOT_CONFIGURED)}", icon=":material/mail:")
    failures(rt, ctx)
    rows = sorted(rt.booking.outbox.list(ctx), key=lambda row: row.get("created_at") or "", reverse=True)
    if not rows:
        st.caption("No messages yet: every booking and cancellation sends its customer an e-mail from here.")
        return
    head = st.columns([4, 1], vertical_alignment="bottom")
    pending = sum(1 for row in rows if row.get("status") == "pending")
    head[0].caption(f"{len(rows)} message(s) · {pending} pending · newest first")
    if head[1].button("Send due now", key="booking_outbox_send", icon=":material/send:", width="stretch",
                      disabled=not pending or not mailer.configured(rt.settings),
                      help="Deliver the pending messages whose next attempt is due."):
        try:
            report = rt.booking.outbox.deliver_due(ctx)
        except UserError as exc:
            st.session_state.setdefault(FLASH, []).append(("error", md(exc)))
        else:
            st.session_state.setdefault(FLASH, []).append(("info", f"Delivery round: {md(summary(report))}"))
        st.rerun()
    st.dataframe(styled(frame(rows)), hide_index=True, width="stretch", column_config=WIDTHS)
