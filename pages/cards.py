"""Cards (C2–C4): the changes the agent proposed, each waiting for a human click before anything is written.

A card holds the operation, its frozen parameters, a preview of the change and the state it was proposed on.
Staff (admins and editors) approve or reject a proposed card here, as the identified customer can in the widget;
the click re-checks expiry, the current state and the kill switches, then executes the frozen card once
(:mod:`core.actions.cards`). Every card shows its ledger (who, when, channel, event, reason); the whole ledger
downloads as CSV. ``?card=ID`` opens one card alone; an id of another tenant answers like one that does not exist.
"""
from __future__ import annotations

import json
from datetime import datetime

import pandas as pd
import streamlit as st

from core.actions.cards import Card, CardNotFound
from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common
from pages.display import ago, code, md, parse, sentence, stamp

FLASH = "cards_flash"
CARD_PARAM = "card"  # ?card=ID opens one card alone
MAX_SHOWN = 50
LIMIT = 200  # the cards the page reads (newest first)
STATUS = {  # status -> (label, badge colour)
    "proposed": ("Waiting for approval", "blue"),
    "executing": ("Executing", "violet"),
    "executed": ("Executed", "green"),
    "failed": ("Failed", "red"),
    "rejected": ("Rejected", "gray"),
    "expired": ("Expired", "orange"),
    "refused": ("Refused at the click", "orange"),
}
#: the filter's choices: label -> status (None = every card)
FILTERS = {"Proposed": "proposed", "Executed": "executed", "Failed": "failed", "Rejected": "rejected",
           "Expired": "expired", "Refused": "refused", "Executing": "executing", "All": None}
OUTCOME = {  # Decision.outcome -> (st.<kind>, what happened)
    "executed": ("success", "Approved and executed"),
    "rejected": ("success", "Rejected: nothing was executed"),
    "failed": ("error", "Approved, but the execution failed"),
    "expired": ("warning", "Not executed: the card had expired"),
    "refused": ("warning", "Not executed: refused at the click"),
    "consumed": ("warning", "Not executed: another decision was taken first"),
    "in_progress": ("info", "Someone else's approval is executing it now; reload in a moment"),
}
LEDGER_COLUMNS = ("at", "actor", "channel", "event", "reason")
LEDGER_WIDTHS = {"When": st.column_config.TextColumn(width=165), "Who": st.column_config.TextColumn(width=180),
                 "Channel": st.column_config.TextColumn(width=78), "Event": st.column_config.TextColumn(width=72),
                 "Reason": st.column_config.TextColumn(width=250), "Detail": st.column_config.TextColumn(width=200)}

_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


# -- formatting -----------------------------------------------------------------------------------------------
def until(iso: str | None, now: datetime) -> str:
    """"in 12 min", "in 2 h", "passed" ("—" for no time), counted from ``now`` (the store's clock: the one that
    decides expiry)."""
    when = parse(iso)
    if when is None:
        return "—"
    seconds = int((when - now).total_seconds())
    if seconds <= 0:
        return "passed"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"in {seconds // size} {unit}"
    return "in under a minute"


def ordered(cards: list[Card]) -> list[Card]:
    """Proposed cards first, then the rest; newest first within each."""
    newest = sorted(cards, key=lambda c: c.created_at or "", reverse=True)
    return [c for c in newest if c.status == "proposed"] + [c for c in newest if c.status != "proposed"]


def value_text(value) -> str:
    """A previewed value as a code span: shown literally, never turned into a link."""
    return f"`{code(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))}`"


def preview(card: Card) -> None:
    """The change as the customer saw it: one line per row, ``before → after`` for a state change."""
    if not card.preview:
        st.caption("No preview.")
        return
    lines = []
    for row in card.preview:
        label = md(row.get("label", ""))
        if "before" in row:
            lines.append(f"- **{label}:** ~~{value_text(row.get('before'))}~~ → **{value_text(row.get('value'))}**")
        else:
            lines.append(f"- **{label}:** {value_text(row.get('value'))}")
    st.markdown("\n".join(lines))


def facts(card: Card, now: datetime) -> str:
    parts = [f"operation `{card.operation}`",
             f"customer **{md(card.customer_id)}**" if card.customer_id else "no identified customer",
             f"channel **{md(card.channel)}**", f"conversation `{card.conversation_id}`",
             f"created {stamp(card.created_at)} ({ago(card.created_at)})"]
    if card.status == "proposed":
        parts.append(f"expires {stamp(card.expires_at)} ({until(card.expires_at, now)})")
    else:
        parts.append(f"expired {stamp(card.expires_at)}" if card.status == "expired" else
                     f"expiry was {stamp(card.expires_at)}")
    if card.decided_at:
        parts.append(f"decided {stamp(card.decided_at)} by {md(card.decided_by or '?')}")
    return " · ".join(parts)


def ledger_frame(rows: list[dict]) -> pd.DataFrame:
    """One card's ledger as a table: when, who, channel, event, reason, and the event's detail (JSON)."""
    frame = pd.DataFrame([{**{c: row.get(c) for c in LEDGER_COLUMNS}, "detail": json.dumps(
        row.get("detail") or {}, ensure_ascii=False, sort_keys=True)} for row in rows],
        columns=[*LEDGER_COLUMNS, "detail"])
    frame["at"] = frame["at"].map(lambda iso: parse(iso).strftime("%Y-%m-%d %H:%M:%S UTC") if iso else "—")
    return frame.rename(columns={"at": "When", "actor": "Who", "channel": "Channel", "event": "Event",
                                 "reason": "Reason", "detail": "Detail"})


# -- deciding ---------------------------------------------------------------------------------------------------
def decide(rt: Runtime, ctx: TenantContext, card: Card, approve: bool) -> None:
    """One human click: the core re-checks and executes (or rejects) once; the page says what happened and why."""
    try:
        with st.spinner("Re-checking the state and executing…" if approve else "Rejecting…"):
            decision = rt.actions.decide(ctx, card.id, approve)
    except CardNotFound:
        flash("error", f"Card `{card.id}` is not here any more; nothing was done.")
    except UserError as exc:
        flash("error", f"Card `{card.id}`: {exc}")
    else:
        kind, what = OUTCOME.get(decision.outcome, ("info", decision.outcome))
        again = " (this decision had already been taken: the stored result is shown)" if decision.repeated else ""
        reason = f" — {md(sentence(decision.reason))}" if decision.reason else ""
        flash(kind, f"**{md(card.title)}** (`{card.id}`): {what}{again}{reason}")
    st.rerun()


def buttons(rt: Runtime, ctx: TenantContext, card: Card, stopped: str | None) -> None:
    if card.status != "proposed":
        return
    row = st.container(horizontal=True)
    approve = row.button("Approve", key=f"card_approve_{card.id}", type="primary", icon=":material/check:",
                         help="Re-checks expiry, the current state and the kill switches, then executes the "
                              "parameters shown, once." + (f" Actions are off now ({stopped}): it will be refused."
                                                           if stopped else ""))
    reject = row.button("Reject", key=f"card_reject_{card.id}", icon=":material/close:",
                        help="Nothing is executed; the customer sees the card rejected.")
    if approve or reject:
        decide(rt, ctx, card, approve)


# -- one card ---------------------------------------------------------------------------------------------------
def show_card(rt: Runtime, ctx: TenantContext, card: Card, stopped: str | None) -> None:
    label, colour = STATUS.get(card.status, (card.status, "gray"))
    with st.container(border=True, key=f"card_{card.id}"):
        head = st.container(horizontal=True, vertical_alignment="center")
        head.markdown(f"#### {md(card.title)}")
        head.badge(label, color=colour)
        st.caption(facts(card, rt.store.clock.now()))
        left, right = st.columns([3, 2], gap="large")
        with left:
            st.markdown("**The change**")
            preview(card)
            st.markdown("**Parameters (frozen: what an approval executes)**")
            st.json(card.params, expanded=True)
        with right:
            if card.reason:
                st.markdown(f"**Reason:** {md(sentence(card.reason))}")
            if card.result is not None:
                st.markdown("**Result**")
                st.json(card.result, expanded=True)
            buttons(rt, ctx, card, stopped)
        rows = rt.actions.ledger(ctx, card.id)
        with st.expander(f"Ledger ({len(rows)} event{'s' if len(rows) != 1 else ''})", icon=":material/history:"):
            if rows:
                st.dataframe(ledger_frame(rows), hide_index=True, width="stretch", column_config=LEDGER_WIDTHS)
            else:
                st.caption("No ledger events.")


def one_card(rt: Runtime, ctx: TenantContext, card_id: str, stopped: str | None) -> None:
    """``?card=ID``: that card alone; a foreign id answers exactly like an unknown one."""
    if st.button("All cards", key="cards_all", icon=":material/arrow_back:"):
        del st.query_params[CARD_PARAM]
        st.rerun()
    try:
        card = rt.actions.card(ctx, card_id)
    except CardNotFound:
        st.warning(f"There is no card `{code(card_id)}` in this tenant. Pick one from the list of all cards.")
        return
    show_card(rt, ctx, card, stopped)


# -- the page ---------------------------------------------------------------------------------------------------
def queue(rt: Runtime, ctx: TenantContext, stopped: str | None) -> None:
    everything = ordered(rt.actions.cards(ctx, limit=LIMIT))
    counts = {status: sum(1 for c in everything if c.status == status) for status in STATUS}
    head = st.columns([3, 1.2], vertical_alignment="bottom")
    choices = [name for name, status in FILTERS.items() if status in (None, "proposed") or counts.get(status)]
    chosen = head[0].segmented_control(
        "Show", choices, key="cards_status", default="Proposed", required=True,
        format_func=lambda name: f"{name} ({counts[FILTERS[name]] if FILTERS[name] else len(everything)})")
    head[1].download_button("Download ledger (CSV)", data=lambda: rt.actions.ledger_csv(ctx), key="cards_ledger_csv",
                            file_name=f"cards-ledger-{ctx.tenant_slug}.csv", mime="text/csv",
                            icon=":material/download:", on_click="ignore", width="stretch",
                            help="Every proposal, decision, re-check and execution of this tenant's cards")
    show_flash()
    wanted = FILTERS.get(chosen or "Proposed")
    shown = [c for c in everything if wanted is None or c.status == wanted]
    if not everything:
        st.info("**No cards yet.** When an identified customer asks the agent for a change (e.g. “change my e-mail "
                "to …”), the agent proposes a card; it waits here and in the customer's chat until someone "
                "approves or rejects it. Define what the agent may do on the Actions page.")
        return
    if not shown:
        st.caption(f"No {chosen.lower()} cards." if chosen else "No cards.")
    for card in shown[:MAX_SHOWN]:
        show_card(rt, ctx, card, stopped)
    if len(shown) > MAX_SHOWN:
        st.caption(f"Showing the first {MAX_SHOWN} of {len(shown)}; the CSV has the whole ledger.")


def main() -> None:
    rt = common.open_app()
    ctx = common.page_context(rt)
    st.title("Cards")
    if not (ctx.can("editor") or ctx.can("admin")):
        st.error(f"Only an admin or an editor decides cards; you are signed in as {ctx.role}.")
        st.stop()
    st.caption("Changes the agent proposed for identified customers. Nothing is written until a person approves: "
               "the customer in the chat, or you here. Approve executes the frozen parameters once, after "
               "re-checking expiry, the current state and the kill switches.")
    stopped = rt.actions.stopped(ctx)
    if stopped:
        st.warning(f"**Actions are off:** {md(sentence(stopped))} Approving a card now executes nothing (it is "
                   "refused).",
                   icon=":material/power_off:")
    card_id = st.query_params.get(CARD_PARAM)
    if card_id:
        show_flash()
        one_card(rt, ctx, card_id, stopped)
    else:
        queue(rt, ctx, stopped)


main()
