"""Uploads from the Sources page (files, a folder, .zip archives): a background job with a live progress bar (file
n of N, the member of a zip being imported, the time left). One upload per tenant at a time; once it has ended,
its report (saved, unchanged, refused, skipped, warnings) is shown as before the upload ran in the background."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Callable

from core.base.progress import Estimate, duration
from core.knowledge import ingest
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import jobs

KIND = "upload"
PLACE = "sources:upload"


def running(ctx: TenantContext) -> jobs.Job | None:
    """The tenant's running upload, if any."""
    return jobs.running(ctx, KIND)


def _import(rt: Runtime, ctx: TenantContext, files: list[tuple[str, bytes]], prefix: str, report: jobs.Report):
    out = ingest.ImportReport()
    estimate = Estimate(rt.store.clock, len(files))

    def step(done: float, what: str) -> None:
        left = estimate.left(done)
        report(done / len(files), f"Importing {what}" + (f" · {duration(left)} left" if left else ""))

    for n, (name, data) in enumerate(files):
        step(n, f"file {n + 1}/{len(files)}: {name}")
        if name.lower().endswith(".zip"):  # a zip in an uploaded folder is imported where it lies
            where = str(PurePosixPath(name.replace("\\", "/")).parent).strip(".")
            ingest.import_zip(ctx, rt.store, name, data, "/".join(p for p in (prefix, where) if p), out,
                              progress=lambda done, total, member, n=n, name=name: step(
                                  n + done / total, f"file {n + 1}/{len(files)}: {name}, {done}/{total} {member}"))
        else:
            ingest.import_bytes(ctx, rt.store, name, data, prefix, out)
    report(1.0, f"Imported {len(files)} file(s): {out.summary()}")
    return out


def start(rt: Runtime, ctx: TenantContext, files: list[tuple[str, bytes]], prefix: str) -> None:
    """Import ``files`` ((name, bytes), a name may hold folders) under ``prefix`` in the background."""
    jobs.start(ctx, KIND, f"The upload of {len(files)} file(s)", PLACE,
               lambda report: _import(rt, ctx, files, prefix, report))


def watch(ctx: TenantContext, on_done: Callable[[ingest.ImportReport], None]) -> jobs.Job | None:
    """The tenant's running upload with its live progress; once this session's upload has ended, ``on_done(report)``.
    Call it before the page's messages and the tree are drawn: ``on_done`` leaves messages and selects a source."""
    def done(job: jobs.Job) -> None:
        if job.error is not None:
            jobs.show_error(job)
        else:
            on_done(job.result)
    return jobs.watch(ctx, KIND, PLACE, done)
