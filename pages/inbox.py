"""Inbox (H1): conversations the agent handed to a person, waiting for the team.

Each handoff shows why it was handed off (the tenant's reason catalog), the conversation as the customer
had it (plus anything said after the handoff and the team's replies), the gap it came from, and whether
the tenant's webhook heard about it. Staff reply (the widget shows the reply in the conversation), close,
reopen, and retry a failed webhook delivery. Admins and editors only.
"""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.channels import conversations, handoff
from core.runtime import Runtime
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext
from pages import common, turn_status
from pages.display import age_seconds, ago, md, stamp

#: Errors whose message is written for the user: shown on the page, never as a traceback.
FILTERS = {"Open": "open", "Closed": "closed", "All": None}
MAX_SHOWN = 50
#: A delivery still pending after this many seconds was interrupted (its attempts take well under a minute).
STUCK_AFTER = 120
GAPS_PAGE = "pages/gaps.py"
FLASH = "inbox_flash"
DRAFTS = "inbox_drafts"

_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


# -- formatting ---------------------------------------------------------------------------------------










def reason_text(reason: str, catalog: dict[str, str]) -> str:
    description = catalog.get(reason)
    return f"`{reason}` — {md(description)}" if description else f"`{reason}` (no longer in the reason catalog)"


# -- keys and actions (callbacks run before the page redraws, so they may clear the reply box) ----------------
def reply_key(handoff_id: int) -> str:
    return f"inbox_reply_{handoff_id}"


def open_key(handoff_id: int) -> str:
    return f"inbox_open_{handoff_id}"


def item_flash(handoff_id: int) -> common.Flash:
    return common.Flash(f"inbox_flash_{handoff_id}")


def _send(rt: Runtime, ctx: TenantContext, handoff_id: int) -> None:
    text = st.session_state.get(reply_key(handoff_id), "")
    try:
        handoff.reply(ctx, rt.store, handoff_id, text)
    except UserError as exc:
        item_flash(handoff_id).set("error", str(exc))
        # kept outside the widget: a box that is not drawn (a colleague closed the handoff) forgets its text
        st.session_state.setdefault(DRAFTS, {})[handoff_id] = text
        return
    st.session_state[reply_key(handoff_id)] = ""
    st.session_state.get(DRAFTS, {}).pop(handoff_id, None)
    item_flash(handoff_id).set("success", "Reply sent: the customer sees it in the conversation.")


def _close(rt: Runtime, ctx: TenantContext, handoff_id: int) -> None:
    try:
        handoff.close(ctx, rt.store, handoff_id)
    except UserError as exc:
        item_flash(handoff_id).set("error", str(exc))
        return
    flash("success", f"Handoff #{handoff_id} closed. It is under **Closed** now; reopen it there if needed.")


def _reopen(rt: Runtime, ctx: TenantContext, handoff_id: int) -> None:
    try:
        handoff.reopen(ctx, rt.store, handoff_id)
    except UserError as exc:
        item_flash(handoff_id).set("error", str(exc))
        return
    flash("success", f"Handoff #{handoff_id} reopened: it is back in the open queue.")


# -- one handoff -------------------------------------------------------------------------------------------
def handed_off_here(turn: dict, reason: str) -> bool:
    """Is this (the transcript's last) turn the one that handed the conversation over? A handoff is queued right
    after the turn that asked for it, so it is when the turn says so, or when it is the uncovered question that
    made a second one (a transcript stored before the turn's status said "handoff")."""
    trace = turn.get("trace") if isinstance(turn.get("trace"), dict) else {}
    return (turn.get("status") == "handoff" or bool(trace.get("handoff"))
            or (reason.startswith("not_covered") and turn.get("status") in ("abstained", "partial")))


def show_turn(turn: dict, handoff_reason: str = "") -> None:
    """A customer turn and the agent's answer; ``handoff_reason`` (markdown) marks the turn that handed off."""
    with st.chat_message("user"):
        st.caption(f"Customer · {stamp(turn.get('at'))}")
        st.markdown(md(turn.get("question")))
    with st.chat_message("assistant"):
        label, colour = turn_status.badge("handoff" if handoff_reason else turn.get("status"), turn.get("trace"))
        st.badge(label, color=colour)
        if handoff_reason:
            st.caption(f"Handed off because of {handoff_reason}")
        st.markdown(md(turn.get("answer")) or "*(no answer)*")
        if turn_status.missing(turn.get("trace")):
            st.caption(f"Not in the material: {turn_status.missing(turn.get('trace'))} (the answer gave the closest "
                       "cited facts; the point asked is a gap).")
        cited = [c for c in turn.get("citations") or [] if isinstance(c, dict)]
        if cited:
            st.caption("Cited: " + " · ".join(f"`{c.get('path') or c.get('id')}`" for c in cited))


def show_reply(item: dict) -> None:
    with st.chat_message("staff", avatar=":material/support_agent:"):
        st.caption(f"{md(item.get('by'))} (team) · {stamp(item.get('at'))}")
        st.markdown(md(item.get("text")))


def transcript(rt: Runtime, ctx: TenantContext, item: dict, catalog: dict[str, str]) -> None:
    """The conversation up to the handoff, then what followed: later turns and the team's replies, in time order.
    The turn that handed off is shown as a handoff, with its reason."""
    turns = item["transcript"]
    for n, turn in enumerate(turns, start=1):
        last = n == len(turns) and handed_off_here(turn, item["reason"])
        show_turn(turn, reason_text(item["reason"], catalog) if last else "")
    if not turns:
        st.caption("The conversation had no turns when it was handed off.")
    st.caption(f":violet[:material/support_agent:] **Handed to a person** {stamp(item['created_at'])}")
    seen = max((t.get("id") or 0 for t in turns), default=0)
    later = [("turn", t) for t in conversations.turns(ctx, rt.store, item["conversation_id"]) if t["id"] > seen]
    timeline = sorted(later + [("reply", r) for r in item["replies"]], key=lambda pair: pair[1].get("at") or "")
    for kind, entry in timeline:
        (show_turn if kind == "turn" else show_reply)(entry)
    if not item["replies"] and item["status"] == "open":
        st.caption("No reply from the team yet.")


def gap_link(rt: Runtime, ctx: TenantContext, item: dict) -> None:
    gap_id = item["gap_id"]
    if gap_id is None:
        return
    gap = rt.backlog.get(ctx, gap_id)
    if gap is None:
        st.markdown(f"**Gap #{gap_id}** (no longer on the backlog: merged into another gap?)")
        return
    st.markdown(f"**Gap #{gap.id}: {md(gap.label)}**  \n"
                f"{gap.status}, asked {gap.count}× · write the article on the Gap backlog page so the agent "
                "answers this next time.")
    if st.button("Open in Gap backlog", key=f"inbox_gap_{item['id']}", icon=":material/help_center:"):
        st.session_state["gap_id"] = gap.id  # the Gap backlog page opens the gap in this key
        if not gap.is_open:
            st.session_state["gaps_status"] = "All"  # its default filter hides closed gaps
        st.switch_page(GAPS_PAGE)


def webhook_state(rt: Runtime, ctx: TenantContext, item: dict) -> None:
    status, attempts = item["webhook_status"], item["webhook_attempts"]
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if status == "delivered":
        st.markdown(f":green[:material/check_circle: **Webhook delivered**] {ago(item['webhook_at'])} "
                    f"({tries} in all)")
        return
    if status == "pending":
        st.markdown(f":blue[:material/schedule: **Webhook delivery pending**] since {ago(item['created_at'])}")
        if age_seconds(item["created_at"]) < STUCK_AFTER:
            st.caption("The delivery retries for a few seconds after the handoff; reload to see how it went.")
            return
        st.caption("Still pending: the delivery was interrupted (the process stopped). Retry it.")
    elif status == "failed":
        error = (item["webhook_error"] or "no error recorded").replace("`", "'")
        st.error(f"**Webhook delivery failed** after {tries} (last {stamp(item['webhook_at'])}):  \n`{error}`",
                 icon=":material/error:")
    else:
        st.caption("Webhook: none was set when this handoff was created (admins set it in Settings → Website widget).")
        return
    if st.button("Retry delivery", key=f"inbox_retry_{item['id']}", icon=":material/send:"):
        try:
            with st.spinner("Calling the webhook…"):
                result = rt.notifier.deliver(ctx, item["id"])
        except UserError as exc:
            st.error(str(exc))
            return
        message = {"delivered": ("success", "Webhook delivered."),
                   "none": ("warning", "No webhook URL is set any more: nothing was sent (Settings → Website widget)."),
                   }.get(result, ("error", "The webhook failed again: its latest error is shown with the details."))
        item_flash(item["id"]).set(*message)
        st.rerun()


def details(rt: Runtime, ctx: TenantContext, item: dict, catalog: dict[str, str],
            convo: conversations.Conversation | None) -> None:
    st.markdown(f"**Reason:** {reason_text(item['reason'], catalog)}")
    facts = [f"opened {stamp(item['created_at'])} ({ago(item['created_at'])})",
             f"conversation `{item['conversation_id']}`"]
    if convo is not None:
        facts.append(f"channel **{md(convo.channel)}**")
        facts.append(f"customer **{md(convo.customer_id)}**" if convo.customer_id else "anonymous visitor")
    if item["status"] == "closed":
        facts.append(f"closed {stamp(item['closed_at'])} by {md(item['closed_by'] or '?')}")
    st.caption(" · ".join(facts))
    gap_link(rt, ctx, item)
    webhook_state(rt, ctx, item)


def reply_box(rt: Runtime, ctx: TenantContext, item: dict) -> None:
    handoff_id = item["id"]
    if item["status"] != "open":
        st.info(f"Closed by {md(item['closed_by'] or '?')} {ago(item['closed_at'])}. Reopen it to reply.")
        st.button("Reopen", key=f"inbox_reopen_{handoff_id}", icon=":material/undo:", on_click=_reopen,
                  args=(rt, ctx, handoff_id))
        return
    drafts = st.session_state.get(DRAFTS, {})
    if handoff_id in drafts and not st.session_state.get(reply_key(handoff_id)):
        st.session_state[reply_key(handoff_id)] = drafts.pop(handoff_id)
    st.text_area("Reply to the customer", key=reply_key(handoff_id), height=110, max_chars=handoff.MAX_REPLY,
                 placeholder="What the customer should read (the chat shows it as a message from your team).")
    buttons = st.container(horizontal=True)
    buttons.button("Send reply", key=f"inbox_send_{handoff_id}", type="primary", icon=":material/reply:",
                   on_click=_send, args=(rt, ctx, handoff_id))
    buttons.button("Close", key=f"inbox_close_{handoff_id}", icon=":material/task_alt:", on_click=_close,
                   args=(rt, ctx, handoff_id), help="Done: it leaves the open queue; transcript and replies stay.")


def label(item: dict, catalog: dict[str, str], channel: str | None) -> str:
    parts = [f"**#{item['id']}**", md(catalog.get(item["reason"], item["reason"]))]
    if channel:
        parts.append(md(channel))
    parts.append(ago(item["created_at"]))
    if item["replies"]:
        parts.append(f"{len(item['replies'])} repl{'ies' if len(item['replies']) != 1 else 'y'}")
    if item["webhook_status"] == "failed":
        parts.append(":red[webhook failed]")
    return " · ".join(parts)


def show_handoff(rt: Runtime, ctx: TenantContext, item: dict, catalog: dict[str, str], first: bool) -> None:
    """One handoff as an expander (the first one starts unfolded)."""
    convo = conversations.get(ctx, rt.store, item["conversation_id"])
    icon = ":material/mark_chat_unread:" if item["status"] == "open" else ":material/task_alt:"
    # a key keeps the expander (open or folded, as the user left it) while its label changes
    with st.expander(label(item, catalog, convo.channel if convo else None), expanded=first, icon=icon,
                     key=open_key(item["id"])):
        item_flash(item["id"]).show()
        left, right = st.columns([3, 2], gap="large")
        with left:
            transcript(rt, ctx, item, catalog)
        with right:
            details(rt, ctx, item, catalog, convo)
            st.divider()
            reply_box(rt, ctx, item)


def orphans(listed: set[int]) -> None:
    """Messages left for a handoff that is not on the page now (a colleague closed it meanwhile): shown on top."""
    for key in [key for key in st.session_state if str(key).startswith("inbox_flash_")]:
        handoff_id = int(str(key).rsplit("_", 1)[1])
        if handoff_id not in listed:  # one still listed shows them when it is unfolded
            for kind, message in st.session_state.pop(key, []):
                getattr(st, kind)(f"Handoff #{handoff_id}: {message}")


# -- the page -----------------------------------------------------------------------------------------------
def main() -> None:
    rt = common.runtime()
    ctx = common.page_context(rt)
    st.title("Inbox")
    if not (ctx.can("editor") or ctx.can("admin")):
        st.error(f"Only an admin or an editor answers handoffs; you are signed in as {ctx.role}.")
        st.stop()
    st.caption("Conversations the agent handed to a person. Read the conversation, reply (the customer sees it in the "
               "chat), close it when done.")
    everything = handoff.handoffs(ctx, rt.store, None)
    catalog = tenant_settings.handoff_reasons(ctx, rt.store)
    counts = {status: sum(1 for h in everything if h["status"] == status) for status in handoff.STATUSES}
    failed = sum(1 for h in everything if h["webhook_status"] == "failed")
    cols = st.columns([1, 1, 1.4, 2.6], vertical_alignment="bottom")
    cols[0].metric("Open", counts["open"], border=True, help="Waiting for the team.")
    cols[1].metric("Closed", counts["closed"], border=True)
    cols[2].metric("Webhook failures", failed, border=True, help="Handoffs the tenant's webhook did not receive.")
    chosen = cols[3].radio("Show", list(FILTERS), key="inbox_status", horizontal=True,
                           format_func=lambda name:
                               f"{name} ({counts[FILTERS[name]] if FILTERS[name] else len(everything)})")
    show_flash()
    wanted = FILTERS[chosen]
    shown = [h for h in everything if wanted is None or h["status"] == wanted]
    if wanted != "open":
        shown.reverse()  # the open queue is oldest first; history is newest first
    orphans({item["id"] for item in shown[:MAX_SHOWN]})
    if not everything:
        st.info("**No handoffs yet.** When the agent cannot help a customer on a support channel (two uncovered "
                "questions, or the customer asks for a person), the conversation lands here with its transcript.",
                icon=":material/inbox:")
        return
    if not shown:
        st.info("Nothing open: every handoff has been answered and closed." if wanted == "open"
                else "No handoff matches this filter.")
        return
    if len(shown) > MAX_SHOWN:
        st.caption(f"Showing {MAX_SHOWN} of {len(shown)}" + (" (the oldest first): close some to see the rest."
                                                             if wanted == "open" else " (the newest)."))
    for n, item in enumerate(shown[:MAX_SHOWN]):
        show_handoff(rt, ctx, item, catalog, n == 0)


main()
