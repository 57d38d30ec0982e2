"""QA suites (Q2): saved cases with what the agent must do (answer citing a source, answer in part, abstain,
hand off, propose a card; what the answer must say and must not say), numbered per suite, a run with a progress
bar, the pass rate, why each case failed, the diff against the previous run, and JSONL import/export. The cases
tab lives in :mod:`pages.qa_cases`, the failure details in :mod:`pages.qa_failures`.

Runs are rehearsals: the agent answers each case in an in-memory conversation, so nothing reaches the
conversation log, the gap backlog or the handoff queue. Changing suites needs the qa role (or admin);
anyone in the tenant can run them and read the results.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.qa import cases as qa_cases, runs as qa_runs, suites as qa
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common, qa_cases as cases_ui, qa_failures, qa_run
from pages.display import stamp

MARK = {"PASS": "color: #188038; font-weight: bold", "FAIL": "color: #d93025; font-weight: bold"}
FLASH = cases_ui.FLASH


_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.0%}"




# -- suites ---------------------------------------------------------------------------------------------------
def create_form(rt: Runtime, ctx: TenantContext, can_edit: bool) -> None:
    with st.form("qa_new_suite", clear_on_submit=True, border=False):
        row = st.columns([3, 1], vertical_alignment="bottom")
        name = row[0].text_input("New suite", key="qa_new_suite_name",
                                 placeholder="e.g. smoke, returns, before release", disabled=not can_edit)
        submitted = row[1].form_submit_button("Create suite", icon=":material/add:", key="qa_create",
                                              disabled=not can_edit, width="stretch")
    if submitted:
        try:
            suite = qa.create_suite(ctx, rt.store, name)
        except UserError as exc:
            st.error(str(exc))
            return
        st.session_state["qa_suite"] = suite.id
        flash("success", f"Suite '{suite.name}' created: add cases or import a JSONL file.")
        st.rerun()


def suite_tab(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite, can_edit: bool) -> None:
    left, right = st.columns(2, gap="large")
    with left:
        st.text_input("Name", value=suite.name, key=f"qa_rename_{suite.id}", disabled=not can_edit)
        if st.button("Rename", key=f"qa_do_rename_{suite.id}", disabled=not can_edit):
            try:
                renamed = qa.rename_suite(ctx, rt.store, suite.id, st.session_state[f"qa_rename_{suite.id}"])
            except UserError as exc:
                st.error(str(exc))
            else:
                flash("success", f"Suite renamed to '{renamed.name}'.")
                st.rerun()
    with right:
        confirm = st.checkbox(f"Delete '{suite.name}' with its {suite.cases} case(s) and every run",
                              key=f"qa_confirm_delete_{suite.id}", disabled=not can_edit)
        if st.button("Delete suite", icon=":material/delete:", key=f"qa_delete_{suite.id}",
                     disabled=not (can_edit and confirm)):
            try:
                qa.delete_suite(ctx, rt.store, suite.id)
            except UserError as exc:
                st.error(str(exc))
            else:
                st.session_state.pop("qa_suite", None)
                flash("success", f"Suite '{suite.name}' deleted.")
                st.rerun()


# -- import / export -------------------------------------------------------------------------------------------
def import_tab(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite, can_edit: bool) -> None:
    st.caption('One case per line: `{"question": "…", "expect": "answered", "cite": "folder/document", '
               '"facts": ["what the answer must say"], "forbidden": ["what it must not say"]}`. '
               f"Fields: {', '.join(qa_cases.FIELDS)}; expect is one of {', '.join(qa_cases.EXPECTATIONS)}. "
               "A bad line imports nothing; a case already in the suite is skipped. Imported cases take the "
               "suite's next numbers.")
    left, right = st.columns([3, 1], gap="large")
    with left:
        upload = st.file_uploader("JSONL file", type=["jsonl", "json", "txt"], key=f"qa_upload_{suite.id}",
                                  disabled=not can_edit)
        pasted = st.text_area("…or paste JSONL", key=f"qa_paste_{suite.id}", height=120, disabled=not can_edit)
        replace = st.checkbox("Replace the suite's cases (past runs stay)", key=f"qa_replace_{suite.id}",
                              disabled=not can_edit)
        if st.button("Import", icon=":material/upload:", key=f"qa_import_{suite.id}", disabled=not can_edit):
            try:
                text = upload.getvalue().decode("utf-8") if upload else pasted
                if not text.strip():
                    raise qa_cases.QaError("Choose a JSONL file or paste its lines first.")
                report = qa.import_jsonl(ctx, rt.store, suite.id, text, replace=replace, create=False)
            except UnicodeDecodeError:
                st.error("The file is not UTF-8 text; save it as UTF-8 JSONL and upload it again.")
            except UserError as exc:
                st.error(str(exc))
            else:
                st.session_state.pop(f"qa_paste_{suite.id}", None)
                flash("success", f"Imported {report.added} case(s)"
                      + (f", skipped {report.skipped} already in the suite" if report.skipped else "")
                      + (f", replaced {report.removed}" if report.removed else "") + ".")
                st.rerun()
    with right:
        st.download_button("Export JSONL", data=lambda: qa.export_jsonl(ctx, rt.store, suite.id),
                           key=f"qa_export_{suite.id}", file_name=f"qa-{ctx.tenant_slug}-{suite.name}.jsonl",
                           mime="application/jsonl",
                           icon=":material/download:", on_click="ignore", width="stretch", disabled=not suite.cases)
        st.caption(f"Run it in CI: `python -m core qa run {ctx.tenant_slug} \"{suite.name}\"` "
                   "(exit 1 when a case fails).")


# -- runs -------------------------------------------------------------------------------------------------------
def run_now(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite) -> None:
    qa_run.start(rt, ctx, suite)  # in the background: qa_run.watch shows its progress, then the run


def results_table(run: qa_runs.Run) -> None:
    frame = pd.DataFrame({
        "Result": ["PASS" if r.passed else "FAIL" for r in run.results],
        "#": [r.number for r in run.results],
        "Question": [r.case["question"] for r in run.results],
        "Expected": [qa_cases.describe(r.case) for r in run.results],
        "Got": [r.status for r in run.results],
        "Why it failed": [r.detail for r in run.results],
        "Channel": [r.case.get("channel", "web") for r in run.results],
        "Cited": [", ".join(r.paths) for r in run.results],
        "Latency (ms)": [r.latency_ms for r in run.results],
    })
    rows = qa_failures.row_height(run.results)  # tall enough for a reason over several lines
    st.dataframe(frame.style.map(lambda v: MARK.get(v, ""), subset=["Result"]), hide_index=True,
                 key=f"qa_results_{run.id}", row_height=rows, height=min(38 + (rows + 1) * len(run.results), 560),
                 column_config=qa_failures.RESULT_COLUMNS)
    qa_failures.details(run)


def diff_view(rt: Runtime, ctx: TenantContext, run: qa_runs.Run) -> None:
    diff = qa_runs.diff_runs(ctx, rt.store, run.id)
    if diff.previous_id is None:
        st.caption("The first run of this suite: the next run is compared with it.")
        return
    st.markdown(f"##### Compared with run #{diff.previous_id}")
    if diff.empty:
        st.success("No case changed between pass and fail, and every case cites the same chunks.")
        return
    if diff.changed:
        st.dataframe(pd.DataFrame({
            "#": [c["number"] for c in diff.changed],
            "Question": [c["question"] for c in diff.changed],
            "Change": ["FAIL → PASS" if c["after"] else "PASS → FAIL" for c in diff.changed],
            "Why it fails now": [c["detail"] for c in diff.changed],
        }), hide_index=True, key=f"qa_diff_changed_{run.id}", row_height=qa_failures.row_height(diff.changed),
            column_config=qa_failures.DIFF_COLUMNS)
    if diff.cited:
        st.dataframe(pd.DataFrame({
            "#": [c["number"] for c in diff.cited],
            "Question": [c["question"] for c in diff.cited],
            "Now also cites": [", ".join(f"{x['id']} ({x['path']})" for x in c["added"]) for c in diff.cited],
            "No longer cites": [", ".join(f"{x['id']} ({x['path']})" for x in c["removed"]) for c in diff.cited],
        }), hide_index=True, key=f"qa_diff_cited_{run.id}")
    notes = [f"new case #{c['number']} ({'pass' if c['passed'] else 'fail'})" for c in diff.new]
    notes += [f"case #{c['number']} is no longer in the suite" for c in diff.gone]
    if notes:
        st.caption(" · ".join(notes))


def run_tab(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite) -> None:
    row = st.columns([1, 3], vertical_alignment="center")
    row[0].button("Run suite", icon=":material/play_arrow:", type="primary", key=f"qa_run_now_{suite.id}",
                  disabled=not suite.cases or qa_run.running(ctx) is not None, width="stretch",
                  on_click=run_now, args=(rt, ctx, suite))
    row[1].caption("Each case is asked as a rehearsal: an in-memory conversation that leaves no conversation, "
                   "gap or handoff behind.")
    qa_run.watch(ctx, suite)
    runs = qa_runs.list_runs(ctx, rt.store, suite.id)
    if not runs:
        st.info("Not run yet." if suite.cases else "Add cases first.")
        return
    by_id = {r.id: r for r in runs}
    key = f"qa_run_{suite.id}"
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = runs[0].id
    chosen = st.selectbox("Run", list(by_id), key=key, format_func=lambda i: (
        f"#{i} · {stamp(by_id[i].finished_at)} · {by_id[i].passed}/{by_id[i].total} passed · by {by_id[i].actor}"))
    run = qa_runs.get_run(ctx, rt.store, chosen)
    previous = qa_runs.previous_run_id(ctx, rt.store, run.id)
    before = qa_runs.get_run(ctx, rt.store, previous) if previous else None
    cols = st.columns(4)
    delta = None
    if before is not None and run.pass_rate is not None and before.pass_rate is not None \
            and round(run.pass_rate * 100) != round(before.pass_rate * 100):
        delta = f"{(run.pass_rate - before.pass_rate) * 100:+.0f} pts"
    cols[0].metric("Pass rate", percent(run.pass_rate), delta=delta, border=True)
    cols[1].metric("Passed", f"{run.passed}/{run.total}", border=True)
    cols[2].metric("Failed", run.total - run.passed, border=True)
    cols[3].metric("Provider", run.provider or "—", border=True)
    if run.failed:
        st.warning(f"{len(run.failed)} case(s) failed: the reason is in “Why it failed”, in full under “Why they "
                   "failed”.")
    else:
        st.success("Every case passed.")
    results_table(run)
    diff_view(rt, ctx, run)


# -- the page ---------------------------------------------------------------------------------------------------
def main() -> None:
    rt = common.runtime()
    ctx = common.page_context(rt)
    can_edit = ctx.can("qa")
    st.title("QA suites")
    st.caption("Questions with what the agent must do. Run a suite after changing the knowledge or the settings, "
               "and see what changed since the last run.")
    if not can_edit:
        st.caption(f"Your role ({ctx.role}) can run suites and read their results; changing them needs the qa role.")
    show_flash()
    suites = qa.list_suites(ctx, rt.store)
    by_id = {s.id: s for s in suites}
    if suites:
        if st.session_state.get("qa_suite") not in by_id:
            st.session_state["qa_suite"] = suites[0].id
        cases_ui.keep_labels_fresh("qa_suite", suites[0].id)  # the label's count is this run's
        st.selectbox("Suite", list(by_id), key="qa_suite", format_func=lambda i: (
            f"{by_id[i].name} · {by_id[i].cases} case(s)"
            + (f" · last run {by_id[i].last_run['passed']}/{by_id[i].last_run['total']}" if by_id[i].last_run else "")))
    else:
        st.info("**No QA suites yet.** A suite is a list of questions with what the agent must do with each: answer "
                "citing a given source, answer in part (say what the material does not mention), abstain, or hand "
                "off to a person. Create one, add cases (or import JSONL), run it after every change.",
                icon=":material/fact_check:")
    with st.expander("Create a suite", expanded=not suites):
        create_form(rt, ctx, can_edit)
    if not suites:
        return
    suite = by_id[st.session_state["qa_suite"]]
    cases = qa.list_cases(ctx, rt.store, suite.id)
    run, cases_, transfer, settings = cases_ui.remembered_tabs(
        {"run": "Run and results", "cases": f"Cases ({len(cases)})", "transfer": "Import / export", "suite": "Suite"},
        "qa_tab")
    with run:
        run_tab(rt, ctx, suite)
    with cases_:
        cases_ui.cases_tab(rt, ctx, suite, cases, can_edit)
    with transfer:
        import_tab(rt, ctx, suite, can_edit)
    with settings:
        suite_tab(rt, ctx, suite, can_edit)


main()
