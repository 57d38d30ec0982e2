"""Long work of the admin app (training, QA runs, uploads) in a background thread, with live progress.

A job belongs to the process, not to a browser session: one job per tenant and kind at a time, so a reload, a
second tab or another editor of the tenant sees the running job and its progress instead of starting another.
A page starts a job with :func:`start` and draws it with :func:`watch`: a fragment that reruns every
``POLL_SECONDS`` and redraws only the progress, so the rest of the page stays usable. When the job ends, the
whole page reruns once, and each place of the session that watched the job shows its outcome (the result or
the error) once. The work itself never touches Streamlit: it gets a ``report(fraction, text)`` function.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from core.base.errors import UserError
from core.tenancy.context import TenantContext

POLL_SECONDS = 0.5
KEEP_FINISHED = 50  # finished jobs kept per process, for the sessions that still have to show their outcome
WATCHED = "_jobs_watched"  # session state: {job id: places of this session that show its outcome}

Report = Callable[[float, str], None]
log = logging.getLogger(__name__)


class JobBusy(UserError):
    """A job of the same kind is already running for the tenant."""


@dataclass
class Job:
    id: str
    tenant_id: int
    kind: str  # "training", "qa-run", "upload"
    label: str  # what people call it: "Training", "Run of suite 'smoke'"
    place: str  # the place of the page that started it
    started_by: str
    meta: dict = field(default_factory=dict)
    fraction: float = 0.0
    text: str = ""
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    def report(self, fraction: float, text: str) -> None:
        """Called by the work (from its thread): how far it has got. A bar never moves back."""
        self.fraction, self.text = max(self.fraction, min(1.0, max(0.0, float(fraction)))), text

    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started


class Jobs:
    """The process's jobs: the running one per (tenant, kind), and the last finished ones.

    ``hold``: when given, each job waits for this event before it works (a test sees a job running, then lets it
    go); the app never passes one."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self.hold = hold

    def start(self, ctx: TenantContext, kind: str, label: str, place: str, work: Callable[[Report], Any],
              meta: dict | None = None) -> Job:
        """Run ``work(report)`` in a thread of its own; :class:`JobBusy` if the tenant runs a job of this kind."""
        with self._lock:
            running = self._running(int(ctx.tenant_id), kind)
            if running is not None:
                raise JobBusy(f"{running.label} is already running for '{ctx.tenant_slug}' (started by "
                              f"{running.started_by} {running.seconds():.0f} s ago); its progress is shown here. "
                              "Wait until it ends, then start again if you still need to.")
            job = Job(uuid.uuid4().hex, int(ctx.tenant_id), kind, label, place, ctx.actor, dict(meta or {}))
            self._jobs[job.id] = job
            self._prune()
        threading.Thread(target=self._run, args=(job, work), name=f"cobertura-{kind}-{job.tenant_id}",
                         daemon=True).start()
        return job

    def _run(self, job: Job, work: Callable[[Report], Any]) -> None:
        try:
            if self.hold is not None:
                self.hold.wait()
            job.result = work(job.report)
        except Exception as exc:  # shown to the user by the page; a bug also goes to the server log
            if not isinstance(exc, UserError):
                log.exception("%s failed", job.label)
            job.error = exc
        finally:
            job.ended = time.monotonic()
            job.finished.set()

    def _running(self, tenant_id: int, kind: str) -> Job | None:
        return next((j for j in self._jobs.values() if j.tenant_id == tenant_id and j.kind == kind and j.running),
                    None)

    def _prune(self) -> None:
        done = sorted((j for j in self._jobs.values() if not j.running), key=lambda j: j.ended or 0)
        for job in done[: max(0, len(done) - KEEP_FINISHED)]:
            del self._jobs[job.id]

    def running(self, ctx: TenantContext, kind: str) -> Job | None:
        """The tenant's running job of this kind, if any."""
        with self._lock:
            return self._running(int(ctx.tenant_id), kind)

    def get(self, ctx: TenantContext, job_id: str) -> Job | None:
        """A job of the tenant (another tenant's job is answered like a missing one)."""
        job = self._jobs.get(job_id)
        return job if job is not None and job.tenant_id == int(ctx.tenant_id) else None

    def wait(self, timeout: float = 60.0) -> None:
        """Until every job has ended (tests); TimeoutError naming a job still running."""
        deadline = time.monotonic() + timeout
        for job in list(self._jobs.values()):
            if not job.finished.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"{job.label} still running after {timeout:g} s")


@st.cache_resource(show_spinner=False)
def registry() -> Jobs:
    """The jobs of this server process, shared by every browser session."""
    return Jobs()


def running(ctx: TenantContext, kind: str) -> Job | None:
    return registry().running(ctx, kind)


def start(ctx: TenantContext, kind: str, label: str, place: str, work: Callable[[Report], Any],
          meta: dict | None = None) -> Job:
    """Start a job and let this session's ``place`` show its outcome; :class:`JobBusy` when one runs already."""
    job = registry().start(ctx, kind, label, place, work, meta)
    st.session_state.setdefault(WATCHED, {}).setdefault(job.id, set()).add(place)
    return job


def watch(ctx: TenantContext, kind: str, place: str, on_done: Callable[[Job], None]) -> Job | None:
    """At ``place``: the outcome of each job of this kind this session watched there and that has ended (once,
    through ``on_done``), then the tenant's running job, if any, with its live progress. Returns the running job.

    All of it is drawn in one container that is there on every run, job or not, so the elements after it keep
    their identity (a tab chosen below stays chosen when a bar appears or goes)."""
    watched: dict[str, set[str]] = st.session_state.setdefault(WATCHED, {})
    with st.container():
        for job_id, places in list(watched.items()):
            job = registry().get(ctx, job_id)
            if job is None or not places:
                watched.pop(job_id, None)
            elif job.kind == kind and place in places and not job.running:
                places.discard(place)
                on_done(job)
        job = running(ctx, kind)
        if job is not None:
            watched.setdefault(job.id, set()).add(place)
            _live(ctx, job.id)
    return job


@st.fragment(run_every=POLL_SECONDS)
def _live(ctx: TenantContext, job_id: str) -> None:
    """The progress of a running job, redrawn on its own; the whole page reruns once the job has ended."""
    job = registry().get(ctx, job_id)
    if job is None or not job.running:
        st.rerun()
    st.progress(job.fraction, text=job.text or f"{job.label}…")
    st.caption(f"{job.label}, started by {job.started_by} {job.seconds():.0f} s ago, runs in the background: "
               "this page stays usable, and you can leave it and come back.")


def show_error(job: Job) -> None:
    """A job's error for people: a user error as written, anything else named with a pointer to the log."""
    if isinstance(job.error, UserError):
        st.error(str(job.error))
    elif job.error is not None:
        st.error(f"{job.label} failed: {type(job.error).__name__}: {job.error}. The server log has the details; "
                 "start it again, and report it if it fails the same way.")
