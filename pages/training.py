"""Training from the admin app (Sources, Gap article, Sandbox): a background job with a live progress bar.

The bar moves per source and per embedding batch of a few chunks and says the time left
(``core.knowledge.training_progress``). One training per tenant: the job registry refuses a second one in this
process, the training lock one in another process (the CLI, a second server), which the page shows as a warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from core.knowledge.training import TrainingBusy, TrainReport
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import jobs

KIND = "training"


@dataclass
class Trained:
    """What a training job gives its page: the report, or why another process kept it from training."""

    report: TrainReport | None
    busy: str = ""  # the TrainingBusy message when another process was training the tenant
    after: Any = None  # what the page asked to do once trained (the Gap article's check)


def _work(rt: Runtime, ctx: TenantContext, then: Callable[[jobs.Report], Any] | None):
    def run(report: jobs.Report) -> Trained:
        try:
            trained = Trained(rt.index.train(ctx, progress=lambda step: report(step.fraction, step.describe())))
        except TrainingBusy as busy:
            trained = Trained(None, str(busy))
        if then is not None:
            trained.after = then(report)
        return trained
    return run


def running(ctx: TenantContext) -> jobs.Job | None:
    """The tenant's training job of this process, if one runs."""
    return jobs.running(ctx, KIND)


def start(rt: Runtime, ctx: TenantContext, place: str, then: Callable[[jobs.Report], Any] | None = None,
          **meta) -> jobs.Job | None:
    """Train what changed in the background (then ``then(report)`` in the same job, if given); the outcome is shown
    at ``place`` by :func:`watch`. None (and a warning) when the tenant already trains in this process."""
    try:
        return jobs.start(ctx, KIND, "Training", place, _work(rt, ctx, then), meta)
    except jobs.JobBusy as busy:
        st.warning(str(busy), icon=":material/hourglass_top:")
        return None


def watch(ctx: TenantContext, place: str, on_done: Callable[[jobs.Job, Trained], None]) -> jobs.Job | None:
    """The tenant's running training with its live progress, and once it has ended, its outcome at ``place``:
    ``on_done(job, trained)``, after the warning when another process was training."""
    def done(job: jobs.Job) -> None:
        if job.error is not None:
            jobs.show_error(job)
            return
        if job.result.busy:
            st.warning(job.result.busy, icon=":material/hourglass_top:")
        on_done(job, job.result)
    return jobs.watch(ctx, KIND, place, done)
