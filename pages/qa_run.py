"""QA suite runs from the admin app: a background job with a live progress bar (case n of N, passed and failed so
far, the time left, the question being asked). One run per tenant at a time; the run is stored as usual
(``core.qa.runs.run_suite``) and its page shows it once it has ended."""
from __future__ import annotations

import streamlit as st

from core.qa import cases as qa_cases, runs as qa_runs
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import jobs

KIND = "qa-run"


def running(ctx: TenantContext) -> jobs.Job | None:
    """The tenant's running QA run, if any."""
    return jobs.running(ctx, KIND)


def start(rt: Runtime, ctx: TenantContext, suite: qa_cases.Suite) -> None:
    """Run the suite in the background; a warning when the tenant already runs one."""
    def work(report: jobs.Report) -> int:
        return qa_runs.run_suite(ctx, rt, suite.id, progress=lambda step: report(step.fraction, step.describe())).id
    try:
        jobs.start(ctx, KIND, f"The run of suite '{suite.name}'", f"qa:{suite.id}", work, {"suite": suite.id})
    except jobs.JobBusy as busy:
        st.warning(str(busy), icon=":material/hourglass_top:")


def watch(ctx: TenantContext, suite: qa_cases.Suite) -> jobs.Job | None:
    """The tenant's running QA run with its live progress; once this suite's run has ended, it becomes the run
    shown (call before the run selector is drawn)."""
    def done(job: jobs.Job) -> None:
        if job.error is not None:
            jobs.show_error(job)
        elif job.meta["suite"] == suite.id:
            st.session_state[f"qa_run_{suite.id}"] = job.result
        else:
            st.caption(f"{job.label} has ended: its results are under that suite.")
    return jobs.watch(ctx, KIND, f"qa:{suite.id}", done)
