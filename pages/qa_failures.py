"""How the QA page shows why cases failed, readable at 1,400 px: result and diff tables whose columns fit the page
and whose rows are tall enough for a reason over several lines, and below the results each failed case in full
(what was expected, the reason, the answer the agent gave and what it cited)."""
from __future__ import annotations

import streamlit as st

from core.qa import cases as qa_cases, runs as qa_runs
from pages.display import md
from pages.table_layout import wrapped

#: characters that fit on one line of each wrapped column at its width
_CHARS = {"Why it failed": 44, "Expected": 28, "Question": 30, "detail": 60}
RESULT_COLUMNS = {
    "Result": st.column_config.TextColumn(width=58),
    "#": st.column_config.NumberColumn(width=42, format="%d"),
    "Question": st.column_config.TextColumn(width=210),
    "Expected": st.column_config.TextColumn(width=190),
    "Got": st.column_config.TextColumn(width=80),
    "Why it failed": st.column_config.TextColumn(width=300),
    "Channel": st.column_config.TextColumn(width=80),
    "Latency (ms)": st.column_config.NumberColumn(width=90, format="%d"),
}
DIFF_COLUMNS = {"#": st.column_config.NumberColumn(width=42, format="%d"),
                "Question": st.column_config.TextColumn(width=260),
                "Change": st.column_config.TextColumn(width=110),
                "Why it fails now": st.column_config.TextColumn(width=420)}


def row_height(items: list) -> int:
    """Pixels per row for results (CaseResult) or diff entries (dicts with a ``detail``)."""
    if items and isinstance(items[0], dict):
        return wrapped([([i.get("detail", "") for i in items], _CHARS["detail"])])
    return wrapped([([r.detail for r in items], _CHARS["Why it failed"]),
                    ([qa_cases.describe(r.case) for r in items], _CHARS["Expected"]),
                    ([r.case.get("question", "") for r in items], _CHARS["Question"])])


def details(run: qa_runs.Run) -> None:
    """Each failed case of the run in full, below the table."""
    if not run.failed:
        return
    st.markdown("##### Why they failed")
    for result in run.failed:
        with st.container(border=True):
            st.markdown(f"**#{result.number}** · {md(result.case['question'])}  \n"
                        f"**Expected:** {md(qa_cases.describe(result.case))}  \n"
                        f"**Why it failed:** {md(result.detail)}")
            with st.expander("The answer it gave", key=f"qa_answer_{run.id}_{result.case_id}"):
                st.markdown(md(result.answer) or "*(no answer)*")
                if result.paths:
                    st.caption("Cited: " + " · ".join(f"`{p}`" for p in result.paths))
