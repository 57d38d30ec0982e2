"""The Gap backlog's parts for answers marked unhelpful (answer feedback): the filter by kind, the tab with the
answer and its citations, the "Turn into QA case" button, and the close check that asks for a changed answer.

A gap of kind ``not_helpful`` comes from a 👎 on an answer the gate had released (widget or Sandbox). Its samples
are the masked questions; the answers marked unhelpful, their citations and the visitors' (masked) reasons come
from :mod:`core.gaps.feedback`. Closing it replays the questions and wants each answer *changed*
(:mod:`core.gaps.replay`), not only answered. Used by ``pages/gaps.py`` and ``pages/gap_article.py``.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.gaps import feedback
from core.gaps.model import KIND_LABELS, KINDS, NOT_HELPFUL, Gap
from core.qa import suites
from core.qa.from_feedback import DEFAULT_SUITE, case_from_gap
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages.display import md, stamp
from pages.gap_actions import flash, guarded

KIND_FILTER = "gaps_kind"
ALL = "All kinds"
TAB = "Answer marked unhelpful"


# -- the list ------------------------------------------------------------------------------------------------
def kind_filter(gaps: list[Gap]) -> str | None:
    """The kind chosen above the table (None: every kind), with the count of each among ``gaps``."""
    counts = {k: sum(1 for g in gaps if g.kind == k) for k in KINDS}
    options = [ALL, *KINDS]
    labels = {ALL: f"All kinds ({len(gaps)})", **{k: f"{KIND_LABELS[k].capitalize()} ({counts[k]})" for k in KINDS}}
    chosen = st.segmented_control("Kind", options, default=ALL, required=True, key=KIND_FILTER,
                                  format_func=labels.__getitem__,
                                  help="Not answered: the agent refused or answered in part. Answered but not "
                                       "helpful: a visitor (or an editor in the Sandbox) gave the answer a thumbs "
                                       "down.")
    return None if chosen in (None, ALL) else chosen


def keep_kind(gap: Gap, kind: str | None) -> bool:
    return kind is None or gap.kind == kind


def kind_badge(gap: Gap) -> str:
    return " :violet-badge[answered but not helpful]" if gap.kind == NOT_HELPFUL else ""


# -- the chosen gap ------------------------------------------------------------------------------------------
def tabs_for(gap: Gap) -> list[str]:
    """The extra tab a gap of this kind shows first."""
    return [TAB] if gap.kind == NOT_HELPFUL else []


def citations_md(citations: list[dict]) -> str:
    return "  \n".join(f"[{n}] `{c.get('path') or c.get('id', '')}` — {md(c.get('title') or '')}"
                       for n, c in enumerate(citations, start=1)) or "_no citation_"


def unhelpful_tab(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    """Each answer marked unhelpful with its citations, the reason given, and the button that makes a QA case."""
    samples = {s["id"]: s for s in rt.backlog.samples(ctx, gap.id)}
    rated = feedback.for_variants(ctx, rt.store, list(samples))
    retention = rt.backlog.retention_days(ctx)
    st.caption(f"{len(rated)} answer(s) marked unhelpful (thumbs down), newest first. The answer passed the "
               "citation gate, yet it did not help: fix the article it cites (or write the one it should have cited), "
               "then close the gap: the check asks the questions again and wants another answer.")
    for row in rated[:10]:
        sample = samples.get(row["variant_id"], {})
        with st.container(border=True):
            question = sample.get("sample") or f"(question purged by retention, {retention} days)"
            st.markdown(f"**Question (masked):** {md(question)}")
            st.caption(f"{stamp(row['updated_at'])} · channel {md(row['channel'])} · language "
                       f"{md(row['language'] or '?')}")
            if row["answer"]:
                st.markdown("**The answer marked unhelpful**")
                st.text(row["answer"])
            else:
                st.caption("The answer's text was purged with the private logs; its citations are kept.")
            st.markdown("**It cited**  \n" + citations_md(row["citations"]))
            if row["reason"]:
                st.markdown(f"**Reason given:** “{md(row['reason'])}”")
    if len(rated) > 10:
        st.caption(f"… and {len(rated) - 10} more.")
    qa_case(rt, ctx, gap)


def _make_case(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    suite = st.session_state.get(f"qa_suite_{gap_id}") or DEFAULT_SUITE
    case = case_from_gap(ctx, rt.store, rt.backlog, gap_id, suite)
    flash("success", f"QA case #{case.number} added to suite “{suite}”: {case.expectation}. Run it on the QA suites "
                     "page.")


def qa_case(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    names = [s.name for s in suites.list_suites(ctx, rt.store)]
    options = list(dict.fromkeys([DEFAULT_SUITE, *names]))
    allowed = ctx.can("qa")
    row = st.columns([2, 1], vertical_alignment="bottom")
    row[0].selectbox("QA suite", options, key=f"qa_suite_{gap.id}", disabled=not allowed,
                     help=f"“{DEFAULT_SUITE}” is created on first use.")
    row[1].button("Turn into QA case", icon=":material/playlist_add_check:", key=f"qa_case_{gap.id}",
                  disabled=not allowed, on_click=guarded(_make_case), args=(rt, ctx, gap.id), width="stretch",
                  help="A regression case: this question must get an answer (citing the article once the gap is "
                       "closed with one)." if allowed else "Needs the qa role (or admin).")


# -- the close check -----------------------------------------------------------------------------------------
def changed_check(gap: Gap, rows: list[dict], article: str) -> bool:
    """The replay of a not-helpful gap: which questions now get another answer. True when every one does."""
    changed = sum(1 for r in rows if r.get("changed"))
    st.markdown(f"##### Check of `{article}`: {changed} of {len(rows)} stored question(s) answered differently")
    if rows:
        frame = pd.DataFrame({
            "Changed": ["✓" if r.get("changed") else "✗" for r in rows],
            "Cites the article": ["✓" if r["cites_article"] else "✗" for r in rows],
            "Question (masked)": [r["sample"] for r in rows],
            "Answer now": [r["answer"] or "(the agent would abstain)" for r in rows],
            "Answer marked unhelpful": [r.get("previous_answer") or "(purged)" for r in rows],
        })
        mark = {"✓": "color: #188038; font-weight: bold", "✗": "color: #d93025; font-weight: bold"}
        st.dataframe(frame.style.map(lambda v: mark.get(v, ""), subset=["Changed", "Cites the article"]),
                     hide_index=True, key=f"changed_table_{gap.id}",
                     column_config={"Changed": st.column_config.TextColumn(width="small"),
                                    "Cites the article": st.column_config.TextColumn(width="small"),
                                    "Question (masked)": st.column_config.TextColumn(width="medium"),
                                    "Answer now": st.column_config.TextColumn(width="medium"),
                                    "Answer marked unhelpful": st.column_config.TextColumn(width="medium")})
    if not rows:
        st.info("Every question of this gap was purged by retention: there is nothing to replay.")
    elif not changed:
        st.error("**No stored question gets another answer yet** (the agent gives the answer marked unhelpful "
                 "again, or none at all): the gap cannot be closed. Change the article (or the sources it cites), "
                 "then check again.")
    elif changed < len(rows):
        st.warning(f"**{len(rows) - changed} of {len(rows)} question(s) still get the same answer.** Closing is "
                   "allowed; a new thumbs down on one of them reopens the gap.")
    else:
        st.success("Every stored question now gets another answer.")
    return bool(rows) and changed == len(rows)


def closable(gap: Gap, rows: list[dict]) -> bool:
    """A not-helpful gap closes only when one replayed answer changed (or nothing was left to replay)."""
    return gap.kind != NOT_HELPFUL or not rows or any(r.get("changed") for r in rows)
