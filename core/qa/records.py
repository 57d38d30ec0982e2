"""The stored QA runs and their results: the one module whose SQL reads or writes ``qa_runs`` and
``qa_results``. It imports nothing else of ``core.qa``: :mod:`core.qa.runs` (which runs suites) and
:mod:`core.qa.suites` (which lists and deletes them) both build on it.

A result is a dict with the fields of :class:`core.qa.runs.CaseResult` (``case_id, position, case, status,
passed, detail, answer, citations, steps, latency_ms``); ``case`` is stored as the ``snapshot`` column and
``case``, ``citations`` and ``steps`` as JSON.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable

from core.base.store import Store

if TYPE_CHECKING:
    from core.tenancy.context import TenantContext

_RUN_COLUMNS = "id, suite_id, started_at, finished_at, actor, provider, total, passed"


def add_run(ctx: TenantContext, store: Store, suite_id: int, *, started_at: str, finished_at: str, provider: str,
            total: int, passed: int, results: Iterable[dict]) -> int:
    """Store a finished run by ``ctx.actor`` with its results; the new run's id. Joins the caller's
    transaction (the runner checks there that the suite still exists)."""
    with store.write() as db:
        run_id = db.execute(
            "INSERT INTO qa_runs (tenant_id, suite_id, started_at, finished_at, actor, provider, total, passed) "
            "VALUES (?,?,?,?,?,?,?,?)",
            [ctx.tenant_id, suite_id, started_at, finished_at, ctx.actor, provider, total, passed],
        ).lastrowid
        for r in results:
            db.execute(
                "INSERT INTO qa_results (tenant_id, run_id, case_id, position, snapshot, status, passed, detail, "
                "answer, citations, steps, latency_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [ctx.tenant_id, run_id, r["case_id"], r["position"], json.dumps(r["case"], ensure_ascii=False),
                 r["status"], int(r["passed"]), r["detail"], r["answer"],
                 json.dumps(r["citations"], ensure_ascii=False), json.dumps(r["steps"], ensure_ascii=False),
                 r["latency_ms"]],
            )
    return run_id


def run(ctx: TenantContext, store: Store, run_id: int) -> dict | None:
    """``{id, suite_id, started_at, finished_at, actor, provider, total, passed}`` of one of this tenant's runs."""
    rows = store.query(f"SELECT {_RUN_COLUMNS} FROM qa_runs WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, run_id])
    return rows[0] if rows else None


def runs_of(ctx: TenantContext, store: Store, suite_id: int, limit: int) -> list[dict]:
    """A suite's latest runs (as :func:`run` gives them), newest first."""
    return store.query(f"SELECT {_RUN_COLUMNS} FROM qa_runs WHERE tenant_id = ? AND suite_id = ? "
                       "ORDER BY id DESC LIMIT ?",
                       [ctx.tenant_id, suite_id, limit])


def results(ctx: TenantContext, store: Store, run_id: int) -> list[dict]:
    """A run's results in case order, decoded (the fields of ``CaseResult``)."""
    rows = store.query(
        "SELECT case_id, position, snapshot, status, passed, detail, answer, citations, steps, latency_ms "
        "FROM qa_results WHERE tenant_id = ? AND run_id = ? ORDER BY position, id", [ctx.tenant_id, run_id])
    return [{"case_id": row["case_id"], "position": row["position"], "case": json.loads(row["snapshot"]),
             "status": row["status"], "passed": bool(row["passed"]), "detail": row["detail"], "answer": row["answer"],
             "citations": json.loads(row["citations"]), "steps": json.loads(row["steps"]),
             "latency_ms": row["latency_ms"]} for row in rows]


def previous_run_id(ctx: TenantContext, store: Store, suite_id: int, run_id: int) -> int | None:
    """The suite's run just before ``run_id``, if any."""
    rows = store.query("SELECT MAX(id) AS id FROM qa_runs WHERE tenant_id = ? AND suite_id = ? AND id < ?",
                       [ctx.tenant_id, suite_id, run_id])
    return rows[0]["id"] if rows and rows[0]["id"] else None


def last_runs(ctx: TenantContext, store: Store, suite_ids: list[int]) -> dict[int, dict]:
    """For each of these suites that has run: ``{id, finished_at, total, passed}`` of its latest run."""
    if not suite_ids:
        return {}
    rows = store.query(
        "SELECT suite_id, id, finished_at, total, passed FROM qa_runs WHERE tenant_id = ? AND id IN "
        "(SELECT MAX(id) FROM qa_runs WHERE tenant_id = ? AND suite_id IN (SELECT value FROM json_each(?)) "
        "GROUP BY suite_id)",
        [ctx.tenant_id, ctx.tenant_id, json.dumps(suite_ids)])
    return {row["suite_id"]: {k: v for k, v in row.items() if k != "suite_id"} for row in rows}


def delete_runs_of(ctx: TenantContext, store: Store, suite_id: int) -> None:
    """Delete a suite's runs and their results; joins the caller's transaction (deleting the suite)."""
    with store.write() as db:
        db.execute("DELETE FROM qa_results WHERE tenant_id = ? AND run_id IN "
                   "(SELECT id FROM qa_runs WHERE tenant_id = ? AND suite_id = ?)",
                   [ctx.tenant_id, ctx.tenant_id, suite_id])
        db.execute("DELETE FROM qa_runs WHERE tenant_id = ? AND suite_id = ?", [ctx.tenant_id, suite_id])
