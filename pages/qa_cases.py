"""The QA page's cases: the table of a suite's cases (numbered 1, 2, … in their suite), the form that adds or edits
one (question, earlier messages, channel, what the agent must do, the source it cites, the facts the answer must
say and the texts it must not), and the page's tabs, which stay where the user is.

Case numbers are per suite (``Case.number``); the global id stays the key of forms, selectors and runs.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.channels.conversations import CHANNELS
from core.qa import cases as qa_cases, suites as qa
from core.runtime import Runtime
from core.tenancy.context import SUPPORT_CHANNELS, TenantContext
from pages import common, placeholders
from pages.table_layout import wrapped

FLASH = "qa_flash"  # the QA page's messages for its next run
NEW = 0  # the case selector's "new case" entry
EXPECT_LABELS = {"answered": "answered (optionally citing a source)",
                 "partial": "partial (says what the material does not mention, then the closest facts)",
                 "abstains": "abstains (a partial answer does not pass)",
                 "handoff": "hands off to a person", "card": "proposes a card (not built yet)"}
FIELDS = ("question", "prefix", "cite", "facts", "forbidden", "card", "note")  # the form's free-text fields
flash = common.Flash(FLASH).set


def lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def keep_labels_fresh(key: str, default) -> None:
    """Set a selectbox's value before it is drawn, on every run. Its labels carry counts (a suite's cases, a
    case's question); the browser shows a changed label of the chosen option only when the value is set, so
    without this the suite selector still said "1 case(s)" after the second case was added."""
    st.session_state[key] = st.session_state.get(key, default)


def remembered_tabs(labels: dict[str, str], key: str) -> list:
    """``st.tabs`` that stay on the tab the user is on when a label changes ("Cases (1)" → "Cases (2)") or a
    message appears above them: the open tab is remembered by its name (a key of ``labels``), not its label.

    Streamlit keys the tabs' state by their labels and their default tab, so the default changes only with the
    labels (a click on a tab would be lost if it changed the default): then the remembered tab is the default."""
    names, shown = list(labels), list(labels.values())
    opened = st.session_state.get(f"{key}_open")
    last = st.session_state.get(f"{key}_drawn")
    if last and last[0] == shown:
        default = last[1]
    else:
        default = labels[opened] if opened in labels else shown[0]
    st.session_state[f"{key}_drawn"] = (shown, default)
    tabs = st.tabs(shown, key=key, default=default, on_change="rerun")
    for name, tab in zip(names, tabs):
        if tab.open:
            st.session_state[f"{key}_open"] = name
    return tabs


def cases_table(cases: list[qa_cases.Case]) -> None:
    frame = pd.DataFrame({
        "#": [c.number for c in cases],
        "Question": [c.question for c in cases],
        "Earlier messages": [" → ".join(c.prefix) for c in cases],
        "Channel": [c.channel for c in cases],
        "Expectation": [c.expectation for c in cases],
        "Note": [c.note for c in cases],
    })
    rows = wrapped([(list(frame["Question"]), 38), (list(frame["Expectation"]), 36),
                (list(frame["Note"]), 22), (list(frame["Earlier messages"]), 18)])
    st.dataframe(frame, hide_index=True, key="qa_cases_table", row_height=rows,
                 height=min(38 + (rows + 1) * len(cases), 460),
                 column_config={"#": st.column_config.NumberColumn(width=45, format="%d"),
                                "Question": st.column_config.TextColumn(width=260),
                                "Earlier messages": st.column_config.TextColumn(width=130),
                                "Channel": st.column_config.TextColumn(width=80),
                                "Expectation": st.column_config.TextColumn(width=250),
                                "Note": st.column_config.TextColumn(width=160)})


def _inputs(rt: Runtime, ctx: TenantContext, case: qa_cases.Case | None, ref) -> dict:
    """The form's fields (inside the form), as ``add_case`` / ``edit_case`` take them, plus the question."""
    question = st.text_area("Question", value=case.question if case else "", key=f"qa_question_{ref}", height=80,
                            placeholder=placeholders.question(rt, ctx))
    prefix = st.text_area("Earlier messages of the conversation (one per line, optional)", key=f"qa_prefix_{ref}",
                          value="\n".join(case.prefix) if case else "", height=80,
                          help="Asked first, in the same conversation: a follow-up is rewritten from them, and an "
                               "uncovered one counts toward the handoff rule.")
    row = st.columns(2)
    channel = row[0].selectbox("Channel", CHANNELS, key=f"qa_channel_{ref}",
                               index=CHANNELS.index(case.channel) if case else 0,
                               help=f"The second uncovered question hands off only in {', '.join(SUPPORT_CHANNELS)}.")
    expect = row[1].selectbox("The agent must", qa_cases.EXPECTATIONS, key=f"qa_expect_{ref}",
                              index=qa_cases.EXPECTATIONS.index(case.expect) if case else 0,
                              format_func=lambda e: EXPECT_LABELS[e])
    row = st.columns(2)
    cite = row[0].text_input("Cite (with 'answered' or 'partial'): a source path or a folder", key=f"qa_cite_{ref}",
                             value=case.cite if case else "", placeholder=placeholders.SOURCE_PATH)
    card = row[1].text_input("Card (with 'proposes a card')", key=f"qa_card_{ref}", value=case.card if case else "")
    row = st.columns(2)
    facts = row[0].text_area("The answer must say (with 'answered' or 'partial')", key=f"qa_facts_{ref}", height=80,
                             value="\n".join(case.facts) if case else "", placeholder=placeholders.FACTS,
                             help="Each line must appear in the answer (case, accents and spacing do not matter; whole "
                                  "words): an answer that only repeats a heading fails and says which is missing.")
    forbidden = row[1].text_area("The answer must not say", key=f"qa_forbidden_{ref}", height=80,
                                 value="\n".join(case.forbidden) if case else "", placeholder=placeholders.FORBIDDEN,
                                 help="No line may appear in the answer (matched like the facts).")
    note = st.text_input("Note (why this case matters)", key=f"qa_note_{ref}", value=case.note if case else "")
    return {"question": question, "prefix": lines(prefix), "channel": channel, "expect": expect,
            "cite": cite if expect in qa_cases.CITING else "", "card": card if expect == "card" else "",
            "facts": lines(facts) if expect in qa_cases.CITING else [], "forbidden": lines(forbidden), "note": note}


def case_form(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite, case: qa_cases.Case | None,
              can_edit: bool) -> None:
    """One form for a new case (``case`` None) or for editing one; keys carry the case so values refill."""
    ref = case.id if case else f"new_{suite.id}"
    with st.form(f"qa_case_form_{ref}"):
        fields = _inputs(rt, ctx, case, ref)
        buttons = st.columns([1, 1, 3])
        save = buttons[0].form_submit_button("Save changes" if case else "Add case", type="primary",
                                             key=f"qa_save_{ref}", disabled=not can_edit)
        delete = buttons[1].form_submit_button("Delete case", key=f"qa_delete_case_{ref}",
                                               disabled=not can_edit) if case else False
    question = fields.pop("question")
    try:
        if save and case:
            qa.edit_case(ctx, rt.store, case.id, question, **fields)
            flash("success", f"Case #{case.number} saved.")
        elif save:
            added = qa.add_case(ctx, rt.store, suite.id, question, **fields)
            for name in FIELDS:  # a fresh form; channel and expectation stay
                st.session_state.pop(f"qa_{name}_{ref}", None)
            flash("success", f"Case #{added.number} added: {added.expectation}.")
        elif delete:
            qa.delete_case(ctx, rt.store, case.id)
            st.session_state.pop(f"qa_case_{suite.id}", None)
            flash("success", f"Case #{case.number} deleted (its past results stay with their runs; its number is not "
                             "given to another case).")
        else:
            return
    except UserError as exc:
        st.error(str(exc))
        return
    st.rerun()


def cases_tab(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite, cases: list[qa_cases.Case],
              can_edit: bool) -> None:
    if cases:
        cases_table(cases)
    else:
        st.info("This suite has no cases yet: add one below, or import a JSONL file.", icon=":material/checklist:")
    by_id = {c.id: c for c in cases}
    key = f"qa_case_{suite.id}"
    if st.session_state.get(key) not in (NEW, *by_id):
        st.session_state[key] = NEW
    keep_labels_fresh(key, NEW)
    chosen = st.selectbox("Case", [NEW, *by_id], key=key, help="Type a case's number (#3) or words of its question.",
                          format_func=lambda i: "➕ New case" if i == NEW
                          else f"#{by_id[i].number} · {by_id[i].question[:80]}")
    case_form(rt, ctx, suite, by_id.get(chosen), can_edit)
