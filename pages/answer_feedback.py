"""👍/👎 on an answer in the admin app (the Sandbox), with an optional reason: the same record as the widget's.

A Sandbox turn is a recorded turn like any other (its channel is the one chosen on the page, ``sandbox`` by
default), so its rating goes through :func:`core.channels.ratings.rate` exactly as the widget's does: a 👎 of an
answered question lands on the Gap backlog as "answered but not helpful", a second rating replaces the first.
Sandbox ratings are not counted in the Sources tree's per-source counts (rehearsals are not visitors' answers).
"""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.channels import ratings
from core.gaps import feedback
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.display import md

THUMBS = {1: "up", 0: "down"}  # st.feedback("thumbs") gives 1 for 👍 and 0 for 👎


def _keys(turn_id: int) -> dict[str, str]:
    return {k: f"fb_{k}_{turn_id}" for k in ("thumbs", "reason", "note")}


def _send(rt: Runtime, ctx: TenantContext, turn: dict, rating: str, reason: str | None) -> None:
    keys = _keys(turn["turn_id"])
    try:
        done = ratings.rate(ctx, rt.store, rt.backlog, turn["conversation_id"], turn["turn_id"], rating, reason)
    except UserError as exc:
        st.session_state[keys["note"]] = ("error", str(exc))
        return
    st.session_state[keys["note"]] = ("success", said(done))


def said(done: feedback.Feedback) -> str:
    """What a rating did, for the person who gave it."""
    if done.rating == "up":
        return "Marked helpful."
    if done.gap_id is not None:
        return f"Marked not helpful: on the Gap backlog as gap #{done.gap_id} (answered but not helpful)."
    if done.status == "answered":
        return "Marked not helpful (the question could not be masked, so it was not put on the backlog)."
    return "Marked not helpful. This question is already on the Gap backlog as one the agent did not answer."


def _thumbs(rt: Runtime, ctx: TenantContext, turn: dict) -> None:
    rating = THUMBS.get(st.session_state.get(_keys(turn["turn_id"])["thumbs"]))
    if rating is not None:  # a click on the chosen thumb again clears the widget: the rating stays as it was
        _send(rt, ctx, turn, rating, None)


def _reason(rt: Runtime, ctx: TenantContext, turn: dict) -> None:
    keys = _keys(turn["turn_id"])
    _send(rt, ctx, turn, "down", st.session_state.get(keys["reason"]) or None)


def rate_turn(rt: Runtime, ctx: TenantContext, turn: dict) -> None:
    """The 👍/👎 of one recorded turn, and after a 👎 the optional reason (nothing for a turn not recorded)."""
    turn_id = turn.get("turn_id")
    if turn_id is None or not turn.get("conversation_id"):
        return
    keys = _keys(turn_id)
    stored = feedback.get(ctx, rt.store, turn_id, rt.backlog)
    default = {"up": 1, "down": 0}.get(stored.rating) if stored else None
    row = st.container(horizontal=True, vertical_alignment="center")
    with row:
        st.feedback("thumbs", key=keys["thumbs"], default=default, on_change=_thumbs, args=(rt, ctx, turn))
        kind, note = st.session_state.get(keys["note"], (None, None))
        if note is None and stored is not None:
            note = said(stored)
        if note:
            (st.error if kind == "error" else st.caption)(md(note))
    if stored is not None and stored.rating == "down":
        with st.expander("Why was it not helpful? (optional)", expanded=not stored.reason,
                         icon=":material/rate_review:"):
            st.session_state.setdefault(keys["reason"], stored.reason or "")
            st.text_area("Reason", key=keys["reason"], max_chars=feedback.MAX_REASON_CHARS, height=80,
                         placeholder="What was missing or wrong? Personal data is masked before it is stored.")
            st.button("Send reason", key=f"fb_send_{turn_id}", icon=":material/send:", on_click=_reason,
                      args=(rt, ctx, turn))
